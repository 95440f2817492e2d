/* corral top's terminal, with termios and a few ECMA-48/xterm sequences
 * (docs/dependencies.md says why not curses). */
#include "cli/top/top_terminal.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The alternate screen (xterm's 1049: the shell's screen comes back as it
 * was), the cursor hidden, the screen cleared once. */
#define ENTER_SEQUENCE "\033[?1049h\033[?25l\033[0m\033[H\033[2J"
#define LEAVE_SEQUENCE "\033[0m\033[?25h\033[?1049l"

int top_terminal_write(const struct top_terminal *terminal, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t written = write(terminal->out_fd, data, length);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd out = {.fd = terminal->out_fd, .events = POLLOUT};
				poll(&out, 1, 100);
				continue;
			}
			return -errno;
		}
		data += written;
		length -= (size_t)written;
	}
	return 0;
}

int top_terminal_enter(struct top_terminal *terminal, int in_fd, int out_fd)
{
	*terminal = (struct top_terminal){.in_fd = in_fd, .out_fd = out_fd};
	if (tcgetattr(in_fd, &terminal->saved) < 0)
		return -errno;
	struct termios raw = terminal->saved;
	raw.c_iflag &= ~(tcflag_t)(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
	raw.c_oflag &= ~(tcflag_t)OPOST;
	raw.c_cflag |= CS8;
	raw.c_lflag &= ~(tcflag_t)(ECHO | ICANON | IEXTEN | ISIG);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(in_fd, TCSAFLUSH, &raw) < 0)
		return -errno;
	terminal->raw = true;
	return top_terminal_write(terminal, ENTER_SEQUENCE, strlen(ENTER_SEQUENCE));
}

void top_terminal_leave(struct top_terminal *terminal)
{
	if (!terminal->raw)
		return;
	top_terminal_write(terminal, LEAVE_SEQUENCE, strlen(LEAVE_SEQUENCE));
	tcsetattr(terminal->in_fd, TCSAFLUSH, &terminal->saved);
	terminal->raw = false;
}

void top_terminal_size(const struct top_terminal *terminal, int *rows, int *columns)
{
	struct winsize size;
	if (ioctl(terminal->out_fd, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
		*rows = size.ws_row;
		*columns = size.ws_col;
		return;
	}
	*rows = 24;
	*columns = 80;
}
