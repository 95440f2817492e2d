/* systemd's word splitting, as ExecStart= and Environment= are read
 * (systemd.service(5), "Command lines"; systemd.syntax(7), "Quoting"):
 * words separated by spaces, "double" and 'single' quoted parts, and C
 * escapes (\n \t \\ \" \' \s \xNN \NNN) inside quotes and out. */
#pragma once

/* A NULL-terminated vector of words (free with string_vector_free), or
 * NULL with *why ("unterminated quote") when VALUE cannot be read. */
char **systemd_words(const char *value, const char **why);
