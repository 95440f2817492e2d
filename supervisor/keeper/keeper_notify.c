#include "supervisor/keeper/keeper_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int keeper_notify_open(struct keeper_notify *notify)
{
	*notify = (struct keeper_notify){.relay = -1, .parent = -1};
	const char *target = getenv("NOTIFY_SOCKET");
	if (!target || !*target)
		return 0;
	size_t length = strlen(target);
	if (length >= sizeof(notify->address.sun_path) || (target[0] != '/' && target[0] != '@'))
		return -EINVAL;
	notify->address.sun_family = AF_UNIX;
	memcpy(notify->address.sun_path, target, length);
	if (target[0] == '@')
		notify->address.sun_path[0] = '\0';
	notify->address_length =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + (target[0] == '/'));
	notify->parent = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	notify->relay = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un own = {.sun_family = AF_UNIX};
	int name =
	    snprintf(own.sun_path + 1, sizeof(own.sun_path) - 1, "corral-keeper-%d", (int)getpid());
	int on = 1;
	if (notify->parent < 0 || notify->relay < 0 ||
	    setsockopt(notify->relay, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    bind(notify->relay, (struct sockaddr *)&own,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)name)) < 0) {
		int failure = errno;
		keeper_notify_close(notify);
		return -failure;
	}
	char variable[sizeof(own.sun_path) + 1];
	snprintf(variable, sizeof(variable), "@%s", own.sun_path + 1);
	setenv("NOTIFY_SOCKET", variable, 1);
	unsetenv("WATCHDOG_PID");
	return 0;
}

void keeper_notify_pass(struct keeper_notify *notify, pid_t loop)
{
	for (;;) {
		char message[4096];
		union {
			char bytes[CMSG_SPACE(sizeof(struct ucred))];
			struct cmsghdr align;
		} control;
		struct iovec part = {message, sizeof(message)};
		struct msghdr header = {.msg_iov = &part,
					.msg_iovlen = 1,
					.msg_control = control.bytes,
					.msg_controllen = sizeof(control.bytes)};
		ssize_t got = recvmsg(notify->relay, &header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return;
		const struct ucred *sender = NULL;
		for (struct cmsghdr *part_header = CMSG_FIRSTHDR(&header); part_header;
		     part_header = CMSG_NXTHDR(&header, part_header)) {
			if (part_header->cmsg_level == SOL_SOCKET &&
			    part_header->cmsg_type == SCM_CREDENTIALS)
				sender = (const struct ucred *)CMSG_DATA(part_header);
			else if (part_header->cmsg_level == SOL_SOCKET &&
				 part_header->cmsg_type == SCM_RIGHTS) {
				/* Nothing corral says carries fds (FDSTORE is not
				 * used): any that came are closed. */
				size_t count = (part_header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < count; i++) {
					int fd;
					memcpy(&fd, CMSG_DATA(part_header) + i * sizeof(int),
					       sizeof(int));
					close(fd);
				}
			}
		}
		if (!sender || sender->pid != loop || (header.msg_flags & MSG_TRUNC))
			continue;
		sendto(notify->parent, message, (size_t)got, MSG_NOSIGNAL,
		       (struct sockaddr *)&notify->address, notify->address_length);
	}
}

void keeper_notify_close(struct keeper_notify *notify)
{
	if (notify->relay >= 0)
		close(notify->relay);
	if (notify->parent >= 0)
		close(notify->parent);
	notify->relay = notify->parent = -1;
}
