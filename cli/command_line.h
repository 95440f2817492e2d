/* Where the command is on corral's command line. Options may come before
 * it, as git's and kubectl's do: `corral -c FILE status` is `corral
 * status -c FILE`. One-command mode is what `--`, or no command at all,
 * asks for: `corral -c -- server`, `corral -g sleep 1`. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* argv[1..argc-1] read as options, each with its argument, up to the
 * first other word. Returns that word's index when it is one of the
 * `count` command `names`; 0 when a `--` comes first, the first such word
 * names no command (a program for one-command mode), or there is none.
 * An option takes an argument when any client command's, or one-command
 * mode's, does: the word after `-c` is a config file, not the command. */
int command_line_find_command(int argc, char *const *argv, const char *const *names, size_t count);

/* The argv a command's main gets when its name is at `at` (from
 * command_line_find_command): its name, the options before it, then the
 * words after it, NULL-terminated; *new_argc set. The caller frees the
 * array (not the strings, which are argv's). */
char **command_line_options_after(int argc, char **argv, int at, int *new_argc);

/* For a hint after a usage error of options moved behind the command:
 * the index of the first word that one-command mode would run as its
 * program (its own options, -c and -g without an argument, skipped), or 0
 * when there is none before `at`. */
int command_line_one_command_program(int argc, char *const *argv, int at);
