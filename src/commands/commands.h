/* SPDX-License-Identifier: GPL-2.0 */
/* vmexit's subcommands; each returns the process exit status. */
#ifndef VMEXIT_COMMANDS_H
#define VMEXIT_COMMANDS_H

int cmd_stat(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_explain(int argc, char **argv);

#endif /* VMEXIT_COMMANDS_H */
