/* corral import FILE|DIR...: a corral config from systemd units, a
 * supervisord.conf, a Procfile or an s6-overlay tree, on stdout; what could
 * not be carried over on stderr (docs/cli.md, "corral import"). */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "cli/commands.h"
#include "cli/import/import_sources.h"

/* exit codes: 0 all carried, 1 an input unreadable, 2 something dropped */
#define IMPORT_DROPPED 2

static void print_import_usage(FILE *out)
{
	fprintf(out, "usage: corral import [--from systemd|supervisord|procfile|s6] [--lossy]\n"
		     "                     FILE|DIR...\n\n"
		     "Writes a corral config (YAML) to stdout from what another supervisor runs:\n"
		     "systemd .service units (several: their After=/Requires= become after:;\n"
		     "NAME@INSTANCE.service for a template; drop-ins NAME.service.d/*.conf),\n"
		     "a supervisord.conf (with its [include] files), a Procfile (with the .env\n"
		     "beside it), or an s6-overlay tree (s6-rc.d, services.d, cont-init.d).\n"
		     "Comments in the config say where a meaning shifts. Every setting that\n"
		     "could not be carried over is named on stderr as FILE:LINE: SETTING: why.\n"
		     "Exit 0 when everything was carried, 2 when something was left out, 1\n"
		     "when an input cannot be read.\n\n"
		     "  --from KIND  what the inputs are, when their names and contents do\n"
		     "               not say\n"
		     "  --lossy      exit 0 even when settings were left out (still named)\n");
}

static enum import_kind kind_named(const char *name)
{
	if (strcmp(name, "systemd") == 0)
		return IMPORT_SYSTEMD;
	if (strcmp(name, "supervisord") == 0 || strcmp(name, "supervisor") == 0)
		return IMPORT_SUPERVISORD;
	if (strcmp(name, "procfile") == 0)
		return IMPORT_PROCFILE;
	if (strcmp(name, "s6") == 0 || strcmp(name, "s6-overlay") == 0)
		return IMPORT_S6;
	return IMPORT_UNKNOWN;
}

static bool has_suffix(const char *text, const char *suffix)
{
	size_t length = strlen(text), suffix_length = strlen(suffix);
	return length >= suffix_length && strcmp(text + length - suffix_length, suffix) == 0;
}

static bool exists_in(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct stat status;
	bool found = stat(path, &status) == 0;
	free(path);
	return found;
}

/* What PATH is, from its name, its entries or its first 64 KiB. */
static enum import_kind kind_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct stat status;
	if (stat(path, &status) == 0 && S_ISDIR(status.st_mode)) {
		if (strcmp(base, "s6-rc.d") == 0 || strcmp(base, "services.d") == 0 ||
		    strcmp(base, "cont-init.d") == 0 || exists_in(path, "s6-rc.d") ||
		    exists_in(path, "services.d") || exists_in(path, "cont-init.d") ||
		    exists_in(path, "s6-overlay") || exists_in(path, "etc/s6-overlay") ||
		    exists_in(path, "etc/services.d") || exists_in(path, "etc/cont-init.d"))
			return IMPORT_S6;
		if (exists_in(path, "Procfile"))
			return IMPORT_PROCFILE;
		if (exists_in(path, "supervisord.conf"))
			return IMPORT_SUPERVISORD;
		return IMPORT_UNKNOWN;
	}
	if (has_suffix(base, ".service"))
		return IMPORT_SYSTEMD;
	if (strcmp(base, "Procfile") == 0 || strncmp(base, "Procfile.", 9) == 0)
		return IMPORT_PROCFILE;
	char *text, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	if (regular_file_read(path, 16 * 1024 * 1024, &text, &size, reason) < 0)
		return IMPORT_UNKNOWN;
	enum import_kind kind = IMPORT_UNKNOWN;
	if (strstr(text, "[program:") || strstr(text, "[supervisord]") || strstr(text, "[group:") ||
	    strstr(text, "[include]"))
		kind = IMPORT_SUPERVISORD;
	else if (strstr(text, "[Service]"))
		kind = IMPORT_SYSTEMD;
	free(text);
	return kind;
}

/* A directory given for supervisord or a Procfile names the file in it. */
static char *file_in(const char *path, const char *name)
{
	struct stat status;
	if (stat(path, &status) == 0 && S_ISDIR(status.st_mode))
		return xasprintf("%s/%s", path, name);
	return xstrdup(path);
}

int command_import(int argc, char **argv)
{
	static const struct option options[] = {
	    {"from", required_argument, NULL, 'f'},
	    {"lossy", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum import_kind forced = IMPORT_UNKNOWN;
	bool lossy = false;
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		if (option == 'f') {
			forced = kind_named(optarg);
			if (forced == IMPORT_UNKNOWN)
				return command_usage_error(
				    "import", print_import_usage,
				    "--from %s: not systemd, supervisord, procfile or s6", optarg);
		} else if (option == 'l') {
			lossy = true;
		} else if (option == 'h') {
			print_import_usage(stdout);
			return 0;
		} else {
			return command_usage_error("import", print_import_usage, "unknown option");
		}
	}
	if (optind >= argc)
		return command_usage_error("import", print_import_usage,
					   "name a unit, a supervisord.conf, a Procfile or an "
					   "s6-overlay tree");

	struct import_report report = {0};
	struct ytree_node *config = ytree_map();
	char **units = xcalloc((size_t)argc, sizeof(*units));
	size_t unit_count = 0;
	int result = 0;
	for (int i = optind; i < argc; i++) {
		enum import_kind kind = forced ? forced : kind_of(argv[i]);
		char *path;
		switch (kind) {
		case IMPORT_SYSTEMD:
			units[unit_count++] = argv[i];
			break;
		case IMPORT_SUPERVISORD:
			path = file_in(argv[i], "supervisord.conf");
			result |= supervisord_import(path, config, &report);
			free(path);
			break;
		case IMPORT_PROCFILE:
			path = file_in(argv[i], "Procfile");
			result |= procfile_import(path, config, &report);
			free(path);
			break;
		case IMPORT_S6:
			result |= s6_import(argv[i], config, &report);
			break;
		default:
			import_error(
			    &report, argv[i], 0,
			    "cannot tell what this is: not a .service unit, a "
			    "supervisord.conf, a Procfile or an s6-overlay tree (say it with "
			    "--from)");
			result = -1;
		}
	}
	if (unit_count && systemd_import(units, unit_count, config, &report) < 0)
		result = -1;
	free(units);
	if (result == 0 && !report.errors && !ytree_get(config, "groups")) {
		import_error(&report, argv[optind], 0, "nothing to run was found");
		result = -1;
	}
	if (result != 0 || report.errors) {
		ytree_free(config);
		return 1;
	}
	command_output_setup();
	printf("# Written by corral import");
	for (int i = optind; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	/* Top-level keys (shutdown_timeout) before the groups they concern. */
	struct ytree_node *groups = ytree_get(config, "groups");
	if (groups && config->count > 1 && strcmp(config->entries[0].key, "groups") == 0) {
		struct ytree_entry first = config->entries[0];
		memmove(&config->entries[0], &config->entries[1],
			(config->count - 1) * sizeof(config->entries[0]));
		config->entries[config->count - 1] = first;
	}
	ytree_write(config, stdout);
	ytree_free(config);
	if (command_output_flush())
		return 1;
	if (report.dropped)
		fprintf(stderr, "corral import: %zu setting%s not carried over%s\n", report.dropped,
			report.dropped == 1 ? "" : "s", lossy ? " (--lossy: exit 0)" : "");
	return report.dropped && !lossy ? IMPORT_DROPPED : 0;
}
