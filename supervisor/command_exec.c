/* corral exec: a command inside a running task (exec_session.h). The CLI
 * hands corral its own stdin, stdout and stderr (SCM_RIGHTS), or, with -t,
 * the terminal side of a pseudo-terminal it opens and relays; then waits
 * for the command's exit, which becomes its own. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "supervisor/commands.h"
#include "supervisor/control_client.h"

static void print_exec_usage(FILE *out)
{
	fprintf(out,
		"usage: corral exec [--socket PATH] [-i] [-t] [-u USER] [-e NAME=VALUE]... [-w DIR]\n"
		"                   GROUP/TASK -- COMMAND [ARG]...\n\n"
		"Runs COMMAND inside a running task: in its namespaces, root, cgroup, user and\n"
		"groups, capabilities, seccomp filter, rlimits, umask, environment and working\n"
		"directory. It talks to this terminal or these pipes directly. Exits with\n"
		"COMMAND's code (128+N when killed by signal N; 127 when it is not found).\n\n"
		"  -i, --interactive  pass stdin (else COMMAND reads /dev/null)\n"
		"  -t, --tty          run COMMAND on a pseudo-terminal relayed to this one\n"
		"  -u, --user USER    name, uid or uid:gid instead of the task's user\n"
		"  -e, --env NAME=VALUE\n"
		"                     over the task's environment; repeatable\n"
		"  -w, --workdir DIR  instead of the task's working directory\n"
		"  --socket PATH      corral's control socket (default: $CORRAL_SOCKET, else\n"
		"                     " CONTROL_SOCKET_DEFAULT ")\n\n"
		"Only root and corral's own user may exec.\n");
}

/* The request line, with the fds the command gets. */
static int send_request(int socket_fd, const char *line, const int fds[3])
{
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(int) * 3)];
	} control;
	memset(&control, 0, sizeof(control));
	struct iovec vector = {.iov_base = (void *)line, .iov_len = strlen(line)};
	struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1,
				 .msg_control = &control, .msg_controllen = sizeof(control)};
	struct cmsghdr *header = CMSG_FIRSTHDR(&message);
	header->cmsg_level = SOL_SOCKET;
	header->cmsg_type = SCM_RIGHTS;
	header->cmsg_len = CMSG_LEN(sizeof(int) * 3);
	memcpy(CMSG_DATA(header), fds, sizeof(int) * 3);
	if (sendmsg(socket_fd, &message, MSG_NOSIGNAL) != (ssize_t)vector.iov_len) {
		fprintf(stderr, "corral: cannot send the request: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Reads one reply line (a JSON object); NULL when the connection ended. */
static json_t *read_reply(int socket_fd, char *buffer, size_t size, size_t *used)
{
	for (;;) {
		char *newline = memchr(buffer, '\n', *used);
		if (newline) {
			json_t *reply = json_loadb(buffer, (size_t)(newline - buffer), 0, NULL);
			size_t rest = *used - (size_t)(newline + 1 - buffer);
			memmove(buffer, newline + 1, rest);
			*used = rest;
			return reply;
		}
		if (*used == size)
			return NULL;
		ssize_t got = read(socket_fd, buffer + *used, size - *used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return NULL;
		*used += (size_t)got;
	}
}

/* ---- -t: a pseudo-terminal relayed to ours ---- */

static struct termios saved_terminal;
static bool terminal_raw;
static int pty_master = -1;
static volatile sig_atomic_t window_changed = 1;

static void on_window_change(int signal_number)
{
	(void)signal_number;
	window_changed = 1;
}

static void restore_terminal(void)
{
	if (terminal_raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_terminal);
	terminal_raw = false;
}

static int open_pty(int *slave)
{
	pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (pty_master < 0 || grantpt(pty_master) < 0 || unlockpt(pty_master) < 0) {
		fprintf(stderr, "corral: cannot open a pseudo-terminal: %s\n", strerror(errno));
		return -1;
	}
	*slave = open(ptsname(pty_master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0) {
		fprintf(stderr, "corral: %s: %s\n", ptsname(pty_master), strerror(errno));
		return -1;
	}
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_terminal) == 0) {
		struct termios raw = saved_terminal;
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0) {
			terminal_raw = true;
			atexit(restore_terminal);
		}
	}
	/* The size goes on the pty now, before the command is started on it:
	 * set by the relay loop only, it raced with the command's first look
	 * (`stty size` saw 0 0 now and then). */
	struct winsize window;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &window) == 0)
		ioctl(pty_master, TIOCSWINSZ, &window);
	struct sigaction action = {.sa_handler = on_window_change};
	sigaction(SIGWINCH, &action, NULL);
	return 0;
}

static void copy_some(int from, int to, bool *open)
{
	char buffer[4096];
	ssize_t got = read(from, buffer, sizeof(buffer));
	if (got <= 0) {
		if (got == 0 || (errno != EINTR && errno != EAGAIN))
			*open = false;
		return;
	}
	for (ssize_t done = 0; done < got;) {
		ssize_t written = write(to, buffer + done, (size_t)(got - done));
		if (written <= 0) {
			if (written < 0 && errno == EINTR)
				continue;
			*open = false;
			return;
		}
		done += written;
	}
}

/* Until the exit line comes: our stdin to the pty, the pty to our stdout,
 * our window size to the pty. */
static json_t *relay_until_exit(int socket_fd, char *buffer, size_t size, size_t *used)
{
	bool input_open = true, output_open = true;
	for (;;) {
		if (window_changed) {
			window_changed = 0;
			struct winsize window;
			if (ioctl(STDIN_FILENO, TIOCGWINSZ, &window) == 0)
				ioctl(pty_master, TIOCSWINSZ, &window);
		}
		struct pollfd fds[3] = {{socket_fd, POLLIN, 0},
					{output_open ? pty_master : -1, POLLIN, 0},
					{input_open ? STDIN_FILENO : -1, POLLIN, 0}};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (fds[1].revents)
			copy_some(pty_master, STDOUT_FILENO, &output_open);
		if (fds[2].revents)
			copy_some(STDIN_FILENO, pty_master, &input_open);
		if (fds[0].revents) {
			/* What the command wrote last comes before its exit. */
			while (output_open && poll(&fds[1], 1, 0) > 0 && fds[1].revents)
				copy_some(pty_master, STDOUT_FILENO, &output_open);
			return read_reply(socket_fd, buffer, size, used);
		}
	}
}

int command_exec(int argc, char **argv)
{
	static const struct option options[] = {
		{"socket", required_argument, NULL, 's'},
		{"interactive", no_argument, NULL, 'i'},
		{"tty", no_argument, NULL, 't'},
		{"user", required_argument, NULL, 'u'},
		{"env", required_argument, NULL, 'e'},
		{"workdir", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct control_request request = {.command = CONTROL_EXEC};
	const char *socket_option = NULL;
	bool interactive = false, tty = false;
	char *env[256] = {NULL};
	size_t env_count = 0;
	int option;
	optind = 1;
	while ((option = getopt_long(argc, argv, "+itu:e:w:h", options, NULL)) != -1) {
		switch (option) {
		case 's':
			socket_option = optarg;
			break;
		case 'i':
			interactive = true;
			break;
		case 't':
			tty = true;
			break;
		case 'u':
			snprintf(request.user, sizeof(request.user), "%s", optarg);
			break;
		case 'e':
			if (!strchr(optarg, '=') || optarg[0] == '=' || env_count == 255)
				return command_usage_error("exec", print_exec_usage,
							   "-e %s: expected NAME=VALUE", optarg);
			env[env_count++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				return command_usage_error("exec", print_exec_usage,
							   "-w %s: expected an absolute path", optarg);
			snprintf(request.cwd, sizeof(request.cwd), "%s", optarg);
			break;
		case 'h':
			print_exec_usage(stdout);
			return 0;
		default:
			print_exec_usage(stderr);
			return COMMAND_USAGE_ERROR;
		}
	}
	/* GROUP/TASK, then "--" (optional), then the command. */
	int command_at = optind + 1;
	if (command_at < argc && strcmp(argv[command_at], "--") == 0)
		command_at++;
	if (optind >= argc || command_at >= argc)
		return command_usage_error("exec", print_exec_usage,
					   "expected GROUP/TASK -- COMMAND [ARG]...");
	if (command_set_target("exec", print_exec_usage, &request, argv[optind]) != 0)
		return COMMAND_USAGE_ERROR;
	request.argv = argv + command_at;
	request.env = env_count ? env : NULL;
	char *line = control_request_encode(&request);
	request.argv = request.env = NULL;
	if (!line)
		return command_usage_error("exec", print_exec_usage, "the request cannot be encoded");

	int socket_fd = control_socket_connect(control_socket_path(socket_option));
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC), slave = -1;
	int fds[3] = {interactive ? STDIN_FILENO : devnull, STDOUT_FILENO, STDERR_FILENO};
	if (socket_fd < 0 || (tty && open_pty(&slave) < 0)) {
		free(line);
		return 1;
	}
	if (tty)
		fds[0] = fds[1] = fds[2] = slave;
	int sent = send_request(socket_fd, line, fds);
	free(line);
	if (slave >= 0)
		close(slave);
	close(devnull);
	if (sent < 0)
		return 1;

	char buffer[65536];
	size_t used = 0;
	json_t *reply = read_reply(socket_fd, buffer, sizeof(buffer), &used);
	if (!reply || !json_is_true(json_object_get(reply, "ok"))) {
		restore_terminal();
		if (reply)
			control_connection_print_refusal(reply);
		else
			fprintf(stderr, "corral: corral closed the connection without replying\n");
		json_decref(reply);
		return 1;
	}
	json_decref(reply);
	json_t *end = tty ? relay_until_exit(socket_fd, buffer, sizeof(buffer), &used)
			  : read_reply(socket_fd, buffer, sizeof(buffer), &used);
	restore_terminal();
	if (!end) {
		fprintf(stderr, "corral: the connection to corral ended before the command did\n");
		return 1;
	}
	const char *error = json_string_value(json_object_get(end, "error"));
	if (error)
		fprintf(stderr, "corral: %s\n", error);
	int code = (int)json_integer_value(json_object_get(end, "exit_code"));
	json_decref(end);
	return code;
}
