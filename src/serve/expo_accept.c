// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP content negotiation for /metrics: the exposition format an Accept header asks for, and
 * the Content-Type that names it.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "expo_accept.h"
#include "prom_protobuf.h"

/*
 * Accept: media ranges with optional q. The protobuf format when it is offered a q at least
 * that of either text format (named in full: proto=io.prometheus.client.MetricFamily,
 * encoding=delimited; a wildcard never picks it, as a browser could not read it); else
 * OpenMetrics when it is offered a q at least that of the text format (explicitly, or through
 * a wildcard). Only OpenMetrics 1.0.0 is spoken: a range naming another version does not count.
 */
enum expo_format expo_negotiate(const char *accept)
{
	double q_om = 0, q_text = 0, q_pb = 0;
	const char *p = accept;

	if (!accept)
		return EXPO_TEXT;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char range[256], *params, *tok, *save = NULL;
		double q = 1;
		bool om = false, text = false, any = false, version_ok = true;
		bool pb = false, pb_proto = false, pb_delimited = false;

		if (len >= sizeof(range))
			len = sizeof(range) - 1;
		memcpy(range, p, len);
		range[len] = 0;
		p = end ? end + 1 : p + strlen(p);
		params = strchr(range, ';');
		if (params)
			*params++ = 0;
		tok = range + strspn(range, " \t");
		tok[strcspn(tok, " \t")] = 0;
		om = !strcasecmp(tok, "application/openmetrics-text");
		text = !strcasecmp(tok, "text/plain");
		pb = !strcasecmp(tok, "application/vnd.google.protobuf");
		any = !strcmp(tok, "*/*") || !strcasecmp(tok, "text/*") ||
		      !strcasecmp(tok, "application/*");
		for (tok = params ? strtok_r(params, ";", &save) : NULL; tok;
		     tok = strtok_r(NULL, ";", &save)) {
			tok += strspn(tok, " \t");
			tok[strcspn(tok, " \t")] = 0;	/* no parameter value holds a blank */
			if (!strncasecmp(tok, "q=", 2))
				q = strtod(tok + 2, NULL);
			else if (om && !strncasecmp(tok, "version=", 8))
				version_ok = !strncmp(tok + 8, "1.0.0", 5);
			else if (pb && !strncasecmp(tok, "proto=", 6))
				pb_proto = !strcmp(tok + 6, "io.prometheus.client.MetricFamily");
			else if (pb && !strncasecmp(tok, "encoding=", 9))
				pb_delimited = !strcasecmp(tok + 9, "delimited");
		}
		if (!isfinite(q) || q < 0)
			q = 0;
		if (om && version_ok && q > q_om)
			q_om = q;
		if ((text || any) && q > q_text)
			q_text = q;
		if (pb && pb_proto && pb_delimited && q > q_pb)
			q_pb = q;
	}
	if (q_pb > 0 && q_pb >= q_om && q_pb >= q_text)
		return EXPO_PROTOBUF;
	return q_om > 0 && q_om >= q_text ? EXPO_OPENMETRICS : EXPO_TEXT;
}

const char *expo_content_type(enum expo_format fmt)
{
	if (fmt == EXPO_PROTOBUF)
		return EXPO_PROTOBUF_TYPE;
	if (fmt == EXPO_OPENMETRICS)
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	return "text/plain; version=0.0.4; charset=utf-8";
}
