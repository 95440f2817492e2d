/* The subcommands of the corral binary. Each takes its own argv (argv[0] is
 * the command name) and returns the process exit code. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* CLI convention: 0 success, 1 refused or failed, 2 usage error. */
#define COMMAND_USAGE_ERROR 2
/* `corral reload` whose plan the kernel refused a part of (a memory limit
 * below what the task uses): the rest was applied, so neither 0 nor 1. */
#define COMMAND_APPLIED_IN_PART 3

struct command {
	const char *name;
	const char *summary;
	int (*main)(int argc, char **argv);
	/* Says "corral: exiting with code N" on stderr itself once it ran
	 * something, as a supervisor whose exit code matters (container, VM
	 * console) should; not after --help or a usage error. */
	bool reports_exit_code;
};

int command_run(int argc, char **argv);
int command_check(int argc, char **argv);
/* `corral [OPTIONS] -- COMMAND [ARG]...` (argv[0] is "corral"): one-command
 * mode, tini's and dumb-init's job (one_command.h). */
int command_one(int argc, char **argv);
void command_one_print_usage(FILE *out);

/* Clients of a running corral's control socket (control_client.h). */
int command_status(int argc, char **argv);
int command_reload(int argc, char **argv);
int command_exec(int argc, char **argv);
int command_inspect(int argc, char **argv);
int command_restart(int argc, char **argv);
int command_stop(int argc, char **argv);
int command_start(int argc, char **argv);
int command_signal(int argc, char **argv);
int command_shutdown(int argc, char **argv);
int command_upgrade(int argc, char **argv);
int command_logs(int argc, char **argv);
int command_events(int argc, char **argv);
int command_scale(int argc, char **argv);
/* corral import: a config from systemd units, supervisord, a Procfile, s6 (cli/import/). */
int command_import(int argc, char **argv);
int command_top(int argc, char **argv);

/* For the client commands (command_common.c). A reader that goes away,
 * as `corral events -f | head` does, ends the command quietly: SIGPIPE is
 * ignored and EPIPE on stdout means "done". */
void command_output_setup(void);
/* Flushes stdout. Returns 0 when written (or the reader has gone), else 1
 * after saying why on stderr: an exit code. */
int command_output_flush(void);
/* True when the reader of stdout has gone away. */
bool command_output_closed(void);

/* "corral NAME: MESSAGE", then the usage, on stderr. Returns
 * COMMAND_USAGE_ERROR. */
struct config;

/* Loads CONFIG for `check` and `run`, with `profiles` active (NULL:
 * none). On any error prints every diagnostic as FILE:LINE:COLUMN:
 * message, sets *error_count and returns NULL. */
struct config *command_load_config(const char *const *paths, size_t count,
				   const char *const *profiles, size_t *error_count);

/* The profiles of `check` and `run` (compose's --profile and
 * COMPOSE_PROFILES): each --profile NAME is added (a comma-separated list
 * too); without any, CORRAL_PROFILES's list. */
struct command_profiles {
	char **names; /* NULL-terminated; NULL: none */
	size_t count;
	bool given; /* a --profile was given: CORRAL_PROFILES is not read */
};

/* One --profile's value: 0, or a usage error (COMMAND_USAGE_ERROR). */
int command_profiles_add(struct command_profiles *profiles, const char *value, const char *command,
			 void (*print_usage)(FILE *out));
/* Once the options are read: CORRAL_PROFILES when no --profile was
 * given. 0, or a usage error. */
int command_profiles_finish(struct command_profiles *profiles, const char *command,
			    void (*print_usage)(FILE *out));
void command_profiles_free(struct command_profiles *profiles);

int command_usage_error(const char *name, void (*print_usage)(FILE *out), const char *format, ...)
    __attribute__((format(printf, 3, 4)));

struct control_socket_choice;

/* The end of a client command's option switch, the options they all
 * share: --socket and -c go into `choice` (false: go on); -h prints the
 * usage on stdout (true, *exit_code 0); anything else prints it on stderr
 * (true, *exit_code COMMAND_USAGE_ERROR). */
bool command_common_option(struct control_socket_choice *choice, int option, const char *argument,
			   void (*print_usage)(FILE *out), int *exit_code);

/* The shutdown timeout over the config's `shutdown_timeout`: `flag`
 * (--shutdown-timeout's value; NULL: not given), else the environment's
 * CORRAL_SHUTDOWN_TIMEOUT (unset or empty: none). 0 with *timeout_ms and
 * *source ("--shutdown-timeout", "CORRAL_SHUTDOWN_TIMEOUT"; NULL: neither,
 * the config's holds); else, after saying which source holds what bad
 * value, an exit code: COMMAND_USAGE_ERROR for the flag, 1 for the
 * environment. */
int command_shutdown_timeout(const char *name, void (*print_usage)(FILE *out), const char *flag,
			     uint64_t *timeout_ms, const char **source);

struct control_request;
/* Sets the request's target to `argument` and checks the whole request as
 * the server would (control_request_validate), so that a target of the
 * wrong shape is a usage error before any connection. Returns 0, or
 * COMMAND_USAGE_ERROR after saying why. Pass "" for no target. */
int command_set_target(const char *name, void (*print_usage)(FILE *out),
		       struct control_request *request, const char *argument);
