#include "supervisor/parent/parent_messages.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text_append.h"

int parent_notify_address_parse(const char *value, struct sockaddr_un *address, socklen_t *length,
				char *error, size_t error_size)
{
	size_t value_length = strlen(value);
	memset(address, 0, sizeof(*address));
	address->sun_family = AF_UNIX;
	if (value[0] != '/' && value[0] != '@') {
		snprintf(error, error_size,
			 "\"%s\" is neither an absolute path nor an abstract socket (@NAME)",
			 value);
		return -1;
	}
	if (value_length >= sizeof(address->sun_path)) {
		snprintf(error, error_size, "longer than the %zu bytes a socket address can have",
			 sizeof(address->sun_path) - 1);
		return -1;
	}
	if (value[0] == '@' && value_length == 1) {
		snprintf(error, error_size, "\"@\" names no abstract socket");
		return -1;
	}
	memcpy(address->sun_path, value, value_length);
	/* An abstract name starts with a NUL and is as long as it is: no
	 * NUL at its end, which would be part of the name. */
	if (value[0] == '@') {
		address->sun_path[0] = '\0';
		*length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + value_length);
	} else {
		*length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + value_length + 1);
	}
	return 0;
}

static int parse_number(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (!*text || *end || errno || text[0] == '-')
		return -1;
	*out = value;
	return 0;
}

int parent_watchdog_interval(const char *usec, const char *pid, pid_t self, uint64_t *interval_ms,
			     char *error, size_t error_size)
{
	uint64_t timeout_usec, pid_value;
	*interval_ms = 0;
	if (!usec)
		return 0;
	if (parse_number(usec, &timeout_usec) < 0 || timeout_usec == 0) {
		snprintf(error, error_size, "WATCHDOG_USEC=%s is not a number of microseconds",
			 usec);
		return -1;
	}
	if (pid) {
		if (parse_number(pid, &pid_value) < 0 || pid_value == 0) {
			snprintf(error, error_size, "WATCHDOG_PID=%s is not a process id", pid);
			return -1;
		}
		if (pid_value != (uint64_t)self)
			return 0;
	}
	*interval_ms = timeout_usec / 2000;
	if (*interval_ms == 0)
		*interval_ms = 1;
	return 0;
}

size_t parent_message_format(const struct parent_message *message, char *buffer, size_t size)
{
	size_t used = 0;
	if (!size)
		return 0;
	buffer[0] = '\0';
	if (message->reloading_monotonic_usec)
		text_append(buffer, size, &used, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\n",
			    message->reloading_monotonic_usec);
	if (message->ready)
		text_append(buffer, size, &used, "READY=1\n");
	if (message->stopping)
		text_append(buffer, size, &used, "STOPPING=1\n");
	if (message->extend_timeout_usec)
		text_append(buffer, size, &used, "EXTEND_TIMEOUT_USEC=%" PRIu64 "\n",
			    message->extend_timeout_usec);
	if (message->watchdog)
		text_append(buffer, size, &used, "WATCHDOG=1\n");
	if (message->status) {
		size_t start = used + strlen("STATUS=");
		text_append(buffer, size, &used, "STATUS=%s", message->status);
		for (size_t i = start; i < used; i++)
			if (buffer[i] == '\n' || buffer[i] == '\r')
				buffer[i] = ' ';
	}
	/* Without a trailing line break, as sd_notify(3)'s examples. */
	if (used && buffer[used - 1] == '\n')
		buffer[--used] = '\0';
	return used;
}
