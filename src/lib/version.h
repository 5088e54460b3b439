/* SPDX-License-Identifier: GPL-2.0 */
/* vmexit's version: said by --version and by the exporter's vmexit_build_info. */
#ifndef VMEXIT_VERSION_H
#define VMEXIT_VERSION_H

#define VMEXIT_VERSION	"0.1"

#endif /* VMEXIT_VERSION_H */
