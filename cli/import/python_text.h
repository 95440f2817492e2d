/* The bits of Python that supervisord applies to its config values:
 * %-formatting with named values ("%(program_name)s", "%(process_num)02d"),
 * shlex.split() of a command (POSIX rules), and its KEY="value",KEY2=v
 * environment lists (supervisor.datatypes.dict_of_key_value_pairs). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct python_name {
	const char *name;  /* "program_name", "ENV_HOME" */
	const char *value; /* its text */
	bool number;       /* %d takes it */
};

/* TEXT with every %(name)FORMAT replaced and %% read as %. NULL when a
 * name is not among `names` (its name in `missing`) or a format is bad
 * (`missing` says what). */
char *python_expand(const char *text, const struct python_name *names, size_t count, char *missing,
		    size_t missing_size);

/* shlex.split(TEXT): NULL with *why for an unterminated quote. */
char **python_shlex_split(const char *text, const char **why);

/* KEY=value,KEY2="a, b": calls `add` for each pair; -1 with *why when it
 * is not such a list. */
int python_key_value_pairs(const char *text,
			   void (*add)(void *context, const char *key, const char *value),
			   void *context, const char **why);
