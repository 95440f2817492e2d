#include "cli/command_line.h"

#include <string.h>

#include "base/xmalloc.h"

/* Short options that take an argument in some client command (-c CONFIG,
 * exec's -u USER, -e VAR=VALUE, -w DIR, logs' -n N) or in one-command mode
 * (-e CODE, -p SIGNAL, -r S:R). */
static const char short_with_argument[] = "cenpruw";

/* Long options that take an argument, the same way. */
static const char *const long_with_argument[] = {
    "config",
    "socket",
    "shutdown-timeout",
    "profile",
    "max-unavailable",
    "events",
    "log-format",
    "tail",
    "since",
    "user",
    "env",
    "workdir",
    "rewrite",
    "expect-exit",
    "parent-death-signal",
};

/* `--name` (no `=value`) takes the next word: getopt_long also takes an
 * unambiguous abbreviation, so a prefix of one of them counts. */
static bool long_option_takes_argument(const char *name)
{
	size_t length = strlen(name);
	if (memchr(name, '=', length))
		return false;
	for (size_t i = 0; i < sizeof(long_with_argument) / sizeof(long_with_argument[0]); i++)
		if (strncmp(long_with_argument[i], name, length) == 0)
			return true;
	return false;
}

/* `-abc`: whether its last letter takes the next word (a letter that
 * takes an argument with more letters after it has them as its value). */
static bool short_cluster_takes_argument(const char *letters, const char *with_argument)
{
	for (const char *c = letters; *c; c++)
		if (strchr(with_argument, *c))
			return c[1] == '\0';
	return false;
}

static bool is_option(const char *word)
{
	return word[0] == '-' && word[1] != '\0';
}

/* The first word at or after `from` that is not an option or an option's
 * argument, by the `with_argument` letters (and the long options above):
 * its index, or -1 when a `--` comes first, or argc. */
static int first_operand(int argc, char *const *argv, int from, const char *with_argument)
{
	for (int i = from; i < argc; i++) {
		const char *word = argv[i];
		if (strcmp(word, "--") == 0)
			return -1;
		if (!is_option(word))
			return i;
		bool takes = word[1] == '-' ? long_option_takes_argument(word + 2)
					    : short_cluster_takes_argument(word + 1, with_argument);
		/* `-c --`: the `--` still ends the options; no config is
		 * named "--". */
		if (takes && i + 1 < argc && strcmp(argv[i + 1], "--") != 0)
			i++;
	}
	return argc;
}

int command_line_find_command(int argc, char *const *argv, const char *const *names, size_t count)
{
	int at = first_operand(argc, argv, 1, short_with_argument);
	if (at <= 0 || at >= argc)
		return 0;
	for (size_t i = 0; i < count; i++)
		if (strcmp(argv[at], names[i]) == 0)
			return at;
	return 0;
}

char **command_line_options_after(int argc, char **argv, int at, int *new_argc)
{
	char **moved = xcalloc((size_t)argc + 1, sizeof(*moved));
	int used = 0;
	moved[used++] = argv[at];
	for (int i = 1; i < at; i++)
		moved[used++] = argv[i];
	for (int i = at + 1; i < argc; i++)
		moved[used++] = argv[i];
	*new_argc = used;
	return moved;
}

int command_line_one_command_program(int argc, char *const *argv, int at)
{
	/* One-command mode's letters: -c and -g take no argument there. */
	int program = first_operand(argc < at ? argc : at, argv, 1, "epr");
	return program > 0 && program < at ? program : 0;
}
