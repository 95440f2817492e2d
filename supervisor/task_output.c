#include "supervisor/task_output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static void emit_line(struct task_output *output)
{
	output_sink_write_line(output->sink, output->name, output->line, output->line_length);
	output->on_line(output->on_line_context, output->line, output->line_length);
	output->line_length = 0;
}

/* Splits `data` into lines; a line longer than the buffer is cut into
 * pieces rather than held back. */
static void take_bytes(struct task_output *output, const char *data, size_t size)
{
	while (size) {
		const char *newline = memchr(data, '\n', size);
		size_t chunk = newline ? (size_t)(newline - data) : size;
		size_t room = sizeof(output->line) - output->line_length;
		if (chunk > room)
			chunk = room;
		memcpy(output->line + output->line_length, data, chunk);
		output->line_length += chunk;
		data += chunk;
		size -= chunk;
		if (size && *data == '\n') {
			data++;
			size--;
			emit_line(output);
		} else if (output->line_length == sizeof(output->line)) {
			emit_line(output);
		}
	}
}

/* Returns the bytes read, 0 at EOF or nothing available. */
static ssize_t read_once(struct task_output *output)
{
	char buffer[16384];
	ssize_t got;
	do
		got = read(output->watch.fd, buffer, sizeof(buffer));
	while (got < 0 && errno == EINTR);
	if (got > 0)
		take_bytes(output, buffer, (size_t)got);
	return got;
}

static void on_readable(struct loop_watch *watch, uint32_t events)
{
	/* One read per wakeup keeps a chatty task from starving the others. */
	read_once(watch->data);
}

int task_output_open(struct task_output *output, struct loop *loop, struct output_sink *sink,
		     const char *name, void (*on_line)(void *context, const char *text, size_t length),
		     void *on_line_context)
{
	int fds[2];
	memset(output, 0, sizeof(*output));
	output->watch.fd = -1;
	output->write_fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	output->watch.fd = fds[0];
	output->watch.callback = on_readable;
	output->watch.data = output;
	output->write_fd = fds[1];
	output->name = name;
	output->sink = sink;
	output->on_line = on_line;
	output->on_line_context = on_line_context;
	output->loop = loop;
	int error = loop_watch_add(loop, &output->watch, EPOLLIN);
	if (error < 0) {
		task_output_close(output);
		return error;
	}
	return 0;
}

void task_output_drain(struct task_output *output)
{
	if (output->watch.fd < 0)
		return;
	/* Bounded: a leftover process that keeps writing cannot hold us. */
	for (int reads = 0; reads < 16 && read_once(output) > 0; reads++)
		;
	if (output->line_length)
		emit_line(output);
}

void task_output_close(struct task_output *output)
{
	if (output->watch.fd >= 0) {
		task_output_drain(output);
		loop_watch_remove(output->loop, &output->watch);
		close(output->watch.fd);
		output->watch.fd = -1;
	}
	if (output->write_fd >= 0) {
		close(output->write_fd);
		output->write_fd = -1;
	}
}
