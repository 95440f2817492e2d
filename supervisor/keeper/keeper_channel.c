#include "supervisor/keeper/keeper_channel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int keeper_channel_send(int socket, const struct keeper_message *message, const int *numbers,
			const int *fds, const void *bytes)
{
	bool record = message->kind == KEEPER_RECORD;
	size_t fd_count = record ? message->fd_count : 0, length = record ? message->length : 0;
	if (fd_count > KEPT_RECORD_FDS_MAX || length > KEPT_RECORD_BYTES_MAX)
		return -EMSGSIZE;
	struct iovec parts[3] = {{(void *)message, sizeof(*message)},
				 {(void *)numbers, fd_count * sizeof(int)},
				 {(void *)bytes, length}};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * KEPT_RECORD_FDS_MAX)];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr header = {.msg_iov = parts, .msg_iovlen = 3};
	if (fd_count) {
		header.msg_control = control.bytes;
		header.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
		struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
		rights->cmsg_level = SOL_SOCKET;
		rights->cmsg_type = SCM_RIGHTS;
		rights->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
		memcpy(CMSG_DATA(rights), fds, sizeof(int) * fd_count);
	}
	ssize_t sent;
	do
		sent = sendmsg(socket, &header, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (size_t)sent == sizeof(*message) + fd_count * sizeof(int) + length ? 0 : -EPROTO;
}

/* The fds of SCM_RIGHTS messages in `header`, at most `capacity` kept
 * (the rest closed): how many came. */
static size_t take_fds(struct msghdr *header, int *fds, size_t capacity, size_t *kept)
{
	size_t came = 0;
	*kept = 0;
	for (struct cmsghdr *part = CMSG_FIRSTHDR(header); part; part = CMSG_NXTHDR(header, part)) {
		if (part->cmsg_level != SOL_SOCKET || part->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (part->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++, came++) {
			int fd;
			memcpy(&fd, CMSG_DATA(part) + i * sizeof(int), sizeof(int));
			if (*kept < capacity)
				fds[(*kept)++] = fd;
			else
				close(fd);
		}
	}
	return came;
}

int keeper_channel_receive(int socket, void *buffer, struct keeper_received *received)
{
	struct iovec part = {buffer, KEEPER_MESSAGE_MAX};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * KEPT_RECORD_FDS_MAX)];
		struct cmsghdr align;
	} control;
	struct msghdr header = {.msg_iov = &part,
				.msg_iovlen = 1,
				.msg_control = control.bytes,
				.msg_controllen = sizeof(control.bytes)};
	ssize_t got;
	do
		got = recvmsg(socket, &header, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	size_t kept;
	size_t came = take_fds(&header, received->fds, KEPT_RECORD_FDS_MAX, &kept);
	if (got == 0 && !came)
		return -EPIPE;
	struct keeper_message *message = &received->message;
	bool whole =
	    (size_t)got >= sizeof(*message) && !(header.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
	if (whole) {
		memcpy(message, buffer, sizeof(*message));
		size_t numbers = message->kind == KEEPER_RECORD ? message->fd_count : 0;
		size_t length = message->kind == KEEPER_RECORD ? message->length : 0;
		whole = numbers <= KEPT_RECORD_FDS_MAX && came == numbers &&
			(size_t)got == sizeof(*message) + numbers * sizeof(int) + length;
		received->numbers = (const int *)((char *)buffer + sizeof(*message));
		/* A number a new loop could not be given its fd at: past stdio,
		 * under the kernel's own ceiling (fs.nr_open's default). */
		for (size_t i = 0; whole && i < numbers; i++)
			whole = received->numbers[i] > 2 && received->numbers[i] < (1 << 20);
		received->bytes = (char *)buffer + sizeof(*message) + numbers * sizeof(int);
	}
	if (!whole) {
		for (size_t i = 0; i < kept; i++)
			close(received->fds[i]);
		return -EPROTO;
	}
	return 0;
}

void keeper_channel_apply(struct kept_records *records, const struct keeper_received *received)
{
	const struct keeper_message *message = &received->message;
	if (message->kind == KEEPER_UNSETTLED)
		kept_records_mark_unsettled(records, message->slot);
	if (message->kind != KEEPER_RECORD)
		return;
	kept_records_put(records, message->slot, received->bytes, message->length,
			 received->numbers, received->fds, message->fd_count);
}
