#include "supervisor/keeper/keeper_channel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static unsigned bits(uint32_t mask)
{
	return (unsigned)__builtin_popcount(mask);
}

int keeper_channel_send(int socket, const struct keeper_message *message, const int *fds)
{
	size_t fd_count = message->kind == KEEPER_HOLD ? bits(message->roles) : 0;
	if (fd_count > FD_HOLDER_ROLES)
		return -EINVAL;
	struct iovec part = {(void *)message, sizeof(*message)};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * FD_HOLDER_ROLES)];
		struct cmsghdr align;
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
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
		sent = sendmsg(socket, &header, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	return sent == (ssize_t)sizeof(*message) ? 0 : -EPROTO;
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

int keeper_channel_receive(int socket, struct keeper_message *message, int *fds, size_t *fd_count)
{
	struct iovec part = {message, sizeof(*message)};
	union {
		char bytes[CMSG_SPACE(sizeof(int) * FD_HOLDER_ROLES)];
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
	*fd_count = 0;
	if (got < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	size_t came = take_fds(&header, fds, FD_HOLDER_ROLES, fd_count);
	if (got == 0 && !came)
		return -EPIPE;
	size_t wanted = message->kind == KEEPER_HOLD ? bits(message->roles) : 0;
	if (got != (ssize_t)sizeof(*message) || (header.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    came != wanted ||
	    (message->kind == KEEPER_HOLD && (message->roles | message->drop) >> FD_HOLDER_ROLES)) {
		for (size_t i = 0; i < *fd_count; i++)
			close(fds[i]);
		*fd_count = 0;
		return -EPROTO;
	}
	return 0;
}

void keeper_channel_apply(struct fd_holder *holder, const struct keeper_message *message,
			  const int *fds)
{
	if (message->kind != KEEPER_HOLD)
		return;
	size_t next = 0;
	for (unsigned role = 0; role < FD_HOLDER_ROLES; role++) {
		if (message->roles & (1u << role))
			fd_holder_hold(holder, message->slot, role, fds[next++]);
		else if (message->drop & (1u << role))
			fd_holder_drop(holder, message->slot, role);
	}
}
