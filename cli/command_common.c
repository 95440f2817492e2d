/* What the client commands share: stdout that ends quietly when its reader
 * goes away, usage errors, and the target operand. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xmalloc.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "config/load/config_load.h"
#include "config/load/profiles.h"
#include "supervisor/control/control_protocol.h"

static bool reader_gone;

void command_output_setup(void)
{
	/* Without this, `corral events -f | head -n 3` would die of SIGPIPE
	 * with status 141; with it, the write fails with EPIPE and we stop. */
	signal(SIGPIPE, SIG_IGN);
}

int command_output_flush(void)
{
	if (reader_gone)
		return 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (errno == EPIPE) {
		reader_gone = true;
		return 0;
	}
	fprintf(stderr, "corral: cannot write to stdout: %m\n");
	return 1;
}

bool command_output_closed(void)
{
	return reader_gone;
}

bool command_common_option(struct control_socket_choice *choice, int option, const char *argument,
			   void (*print_usage)(FILE *out), int *exit_code)
{
	if (option != 'h' && control_socket_option(choice, option, argument))
		return false;
	print_usage(option == 'h' ? stdout : stderr);
	*exit_code = option == 'h' ? 0 : COMMAND_USAGE_ERROR;
	return true;
}

int command_usage_error(const char *name, void (*print_usage)(FILE *out), const char *format, ...)
{
	va_list arguments;

	fprintf(stderr, "corral %s: ", name);
	va_start(arguments, format);
	vfprintf(stderr, format, arguments);
	va_end(arguments);
	fputs("\n\n", stderr);
	print_usage(stderr);
	return COMMAND_USAGE_ERROR;
}

int command_shutdown_timeout(const char *name, void (*print_usage)(FILE *out), const char *flag,
			     uint64_t *timeout_ms, const char **source)
{
	const char *why = "";
	*source = NULL;
	if (flag) {
		if (parse_duration_ms(flag, timeout_ms, &why) < 0)
			return command_usage_error(name, print_usage,
						   "--shutdown-timeout %s: invalid duration: %s",
						   flag, why);
		*source = "--shutdown-timeout";
		return 0;
	}
	const char *environment = getenv("CORRAL_SHUTDOWN_TIMEOUT");
	if (!environment || !*environment)
		return 0;
	if (parse_duration_ms(environment, timeout_ms, &why) < 0) {
		fprintf(stderr,
			"corral %s: CORRAL_SHUTDOWN_TIMEOUT=%s (from the environment): invalid "
			"duration: %s\n",
			name, environment, why);
		return 1;
	}
	*source = "CORRAL_SHUTDOWN_TIMEOUT";
	return 0;
}

int command_set_target(const char *name, void (*print_usage)(FILE *out),
		       struct control_request *request, const char *argument)
{
	char error[256];

	if (strlen(argument) > CONTROL_TARGET_MAX)
		return command_usage_error(name, print_usage,
					   "invalid target: longer than %d characters",
					   CONTROL_TARGET_MAX);
	snprintf(request->target, sizeof(request->target), "%s", argument);
	if (control_request_validate(request, error, sizeof(error)) < 0)
		return command_usage_error(name, print_usage, "%s", error);
	return 0;
}

struct config *command_load_config(const char *const *paths, size_t count,
				   const char *const *profiles, size_t *error_count)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config =
	    config_load_paths_with_profiles(paths, count, profiles, &diagnostics);
	*error_count = diagnostics.count;
	if (!config)
		config_diagnostics_print(&diagnostics, paths[0], stderr);
	config_diagnostics_free(&diagnostics);
	/* compose runs on in silence; a misspelt profile ("degub") would
	 * leave out what it was meant to bring in without a word. */
	for (size_t i = 0; config && config->profiles_unlisted && config->profiles_unlisted[i]; i++)
		fprintf(stderr,
			"%s: warning: profile \"%s\" is active, but no group or task lists it\n",
			paths[0], config->profiles_unlisted[i]);
	return config;
}

int command_profiles_add(struct command_profiles *profiles, const char *value, const char *command,
			 void (*print_usage)(FILE *out))
{
	char error[160];
	profiles->given = true;
	if (profiles_split(value, &profiles->names, &profiles->count, error, sizeof(error)) < 0)
		return command_usage_error(command, print_usage, "--profile: %s", error);
	return 0;
}

int command_profiles_finish(struct command_profiles *profiles, const char *command,
			    void (*print_usage)(FILE *out))
{
	const char *from_environment = getenv("CORRAL_PROFILES");
	char error[160];
	if (profiles->given || !from_environment)
		return 0;
	if (profiles_split(from_environment, &profiles->names, &profiles->count, error,
			   sizeof(error)) < 0)
		return command_usage_error(command, print_usage, "CORRAL_PROFILES: %s", error);
	return 0;
}

void command_profiles_free(struct command_profiles *profiles)
{
	string_vector_free(profiles->names);
	*profiles = (struct command_profiles){0};
}
