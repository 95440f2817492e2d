#include "supervisor/control/exec_streams.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "base/cleanup.h"

static void close_all(int *fds, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (fds[i] < 0)
			continue;
		/* The pty's side is there thrice: closed once. */
		for (size_t j = i + 1; j < count; j++)
			if (fds[j] == fds[i])
				fds[j] = -1;
		close(fds[i]);
		fds[i] = -1;
	}
}

static void add_client_fd(struct exec_streams *streams, int fd, const char *name)
{
	streams->client_fds[streams->client_fd_count] = fd;
	streams->client_names[streams->client_fd_count++] = name;
}

/* The pty's terminal side is opened through its master (TIOCGPTPEER), not
 * by its /dev/pts name, which another process could have replaced. */
static int open_terminal(struct exec_streams *streams, const struct exec_streams_request *request,
			 char *error, size_t error_size)
{
	_cleanup_close_ int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	int terminal = -1;
	if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
		terminal = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (terminal < 0) {
		int failure = -errno;
		snprintf(error, error_size, "cannot open a pseudo-terminal: %s",
			 strerror(-failure));
		return failure;
	}
	/* Set before the command starts, so that its first look sees it. */
	if (request->rows && request->columns) {
		struct winsize window = {.ws_row = request->rows, .ws_col = request->columns};
		ioctl(master, TIOCSWINSZ, &window);
	}
	for (int i = 0; i < 3; i++)
		streams->command_fds[i] = terminal;
	add_client_fd(streams, TAKE_FD(master), "tty");
	return 0;
}

static int open_pipes(struct exec_streams *streams, const struct exec_streams_request *request,
		      char *error, size_t error_size)
{
	int ends[2];
	if (request->stdin_relayed) {
		if (pipe2(ends, O_CLOEXEC) < 0)
			goto failed;
		streams->command_fds[0] = ends[0];
		add_client_fd(streams, ends[1], "stdin");
	} else {
		streams->command_fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (streams->command_fds[0] < 0)
			goto failed;
	}
	static const char *const names[] = {NULL, "stdout", "stderr"};
	for (int i = 1; i < 3; i++) {
		if (pipe2(ends, O_CLOEXEC) < 0)
			goto failed;
		streams->command_fds[i] = ends[1];
		add_client_fd(streams, ends[0], names[i]);
	}
	return 0;
failed:;
	int failure = -errno;
	snprintf(error, error_size, "cannot make the command's pipes: %s", strerror(-failure));
	exec_streams_close_command_side(streams);
	exec_streams_close_client_side(streams);
	return failure;
}

int exec_streams_open(struct exec_streams *streams, const struct exec_streams_request *request,
		      char *error, size_t error_size)
{
	memset(streams, 0, sizeof(*streams));
	for (int i = 0; i < 3; i++)
		streams->command_fds[i] = streams->client_fds[i] = -1;
	return request->tty ? open_terminal(streams, request, error, error_size)
			    : open_pipes(streams, request, error, error_size);
}

void exec_streams_close_command_side(struct exec_streams *streams)
{
	close_all(streams->command_fds, 3);
}

void exec_streams_close_client_side(struct exec_streams *streams)
{
	close_all(streams->client_fds, streams->client_fd_count);
	streams->client_fd_count = 0;
}
