/* The terminal under corral top: raw mode on the alternate screen with
 * the cursor hidden, its size, and putting all of it back as it was,
 * whatever way top ends (q, ^C, SIGTERM, SIGHUP, an error). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

struct top_terminal {
	int in_fd, out_fd;
	struct termios saved;
	bool raw; /* saved holds the mode to put back */
};

/* Raw input (no echo, no line editing, no signals from keys: ^C is read
 * as a key), the alternate screen, no cursor. 0, or -errno. */
int top_terminal_enter(struct top_terminal *terminal, int in_fd, int out_fd);
/* Puts everything back; harmless when not entered. */
void top_terminal_leave(struct top_terminal *terminal);
/* The size now: rows and columns, 24x80 when the terminal does not say. */
void top_terminal_size(const struct top_terminal *terminal, int *rows, int *columns);
/* Writes all of `data`, retrying short writes. 0, or -errno. */
int top_terminal_write(const struct top_terminal *terminal, const char *data, size_t length);
