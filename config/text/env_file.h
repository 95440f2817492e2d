/* env files (config `env_file:`), in docker compose's format: one
 * NAME=VALUE a line; blank lines and lines starting with # are skipped;
 * `export ` before a name is allowed; a value in single quotes is taken as
 * written, one in double quotes takes \n \t \\ \" escapes, an unquoted one
 * is trimmed and ends at " #" (an inline comment). Pure, so that it is
 * unit-tested. */
#pragma once

#include <stddef.h>

/* An env file is a few hundred lines; a larger one is a mistake (a log,
 * /dev/zero behind a symlink) that would otherwise fill memory. */
#define ENV_FILE_MAX_BYTES (1u << 20)

typedef void (*env_file_add)(void *context, const char *name, size_t name_length, const char *value,
			     size_t value_length);

/* 0 with every variable given to `add`, in file order; -1 with the line
 * (1-based) and `error` saying what is wrong with it. */
int env_file_parse(const char *text, size_t length, env_file_add add, void *context,
		   unsigned *error_line, char *error, size_t error_size);
