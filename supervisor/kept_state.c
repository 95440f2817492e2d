#include "supervisor/kept_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "supervisor/keeper/keeper_channel.h"
#include "supervisor/supervisor_internal.h"
#include "supervisor/tasks/pid_index.h"
#include "supervisor/tasks/task_keeper.h"
#include "supervisor/upgrade/kept_slots.h"
#include "supervisor/upgrade/task_handover.h"
#include "supervisor/upgrade_state.h"

/* A record the keeper could not take: said once. A keeper gone (EPIPE)
 * takes nothing more: corral stops (PR_SET_PDEATHSIG) and records are
 * no use. */
static void keeper_failed(struct supervisor *supervisor, const char *what, int failure)
{
	if (failure == -EPIPE || failure == -ECONNREFUSED) {
		if (!supervisor->keeper_gone)
			log_message("the keeper is gone: no record is kept from now on");
		supervisor->keeper_gone = true;
		return;
	}
	log_message("cannot send the keeper the record of %s: %s", what, strerror(-failure));
}

/* Records go when the loop has nothing else to do, and at the latest at
 * the end of the first turn this long after a change: a loop kept busy
 * (a hundred tasks starting, a task flooding its output) does not leave
 * the keeper's records, and the zombies waiting for them, behind. */
#define KEPT_FLUSH_WITHIN_MS 10

static void request_flush(struct supervisor *supervisor)
{
	loop_idle_request_within(supervisor->loop, &supervisor->keeper_flush, KEPT_FLUSH_WITHIN_MS);
}

/* corral's own record with a config too big for a message (some 2000
 * tasks): the document goes in a memfd, and the record names it
 * ("memfd_document") with the document's fds. The loop keeps the memfd
 * open until the next one is with the keeper, so that its number is not
 * given to another record's fd meanwhile. Takes `bytes`. */
static int send_in_memfd(struct supervisor *supervisor, char *bytes, size_t length,
			 struct handover_writer *writer)
{
	int memfd = memfd_create("corral-kept-document", MFD_CLOEXEC);
	int failure = memfd < 0 ? -errno : 0;
	for (size_t at = 0; failure == 0 && at < length;) {
		ssize_t wrote = write(memfd, bytes + at, length - at);
		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0)
			failure = wrote < 0 ? -errno : -EIO;
		else
			at += (size_t)wrote;
	}
	free(bytes);
	if (failure < 0) {
		if (memfd >= 0)
			close(memfd);
		return failure;
	}
	struct handover_writer small;
	handover_writer_init(&small);
	for (size_t i = 0; i < writer->fd_count; i++)
		json_decref(handover_fd(&small, writer->fds[i]));
	json_object_set_new(small.root, "memfd_document", handover_fd(&small, memfd));
	size_t small_length;
	char *small_bytes = handover_writer_bytes(&small, &small_length);
	struct keeper_message message = {.kind = KEEPER_RECORD,
					 .slot = KEPT_CORRAL_SLOT,
					 .fd_count = (uint32_t)small.fd_count,
					 .length = (uint32_t)small_length};
	failure = small_bytes ? keeper_channel_send(supervisor->keeper.channel, &message, small.fds,
						    small.fds, small_bytes)
			      : -ENOMEM;
	free(small_bytes);
	handover_writer_free(&small);
	if (failure < 0) {
		close(memfd);
		return failure;
	}
	if (supervisor->kept_document_fd >= 0)
		close(supervisor->kept_document_fd);
	supervisor->kept_document_fd = memfd;
	return 0;
}

/* Sends `writer`'s document under `slot`. 0, or -errno. */
static int send_record(struct supervisor *supervisor, uint32_t slot, struct handover_writer *writer)
{
	if (supervisor->keeper_gone)
		return 0;
	size_t length;
	char *bytes = handover_writer_bytes(writer, &length);
	if (!bytes)
		return -ENOMEM;
	/* The groups' record is written at every flush; most task changes
	 * leave it as it was, and then the keeper has it already. */
	bool groups = slot == KEPT_GROUPS_SLOT;
	if (groups && supervisor->kept_groups && supervisor->kept_groups_length == length &&
	    memcmp(supervisor->kept_groups, bytes, length) == 0) {
		free(bytes);
		return 0;
	}
	if (slot == KEPT_CORRAL_SLOT && length > KEPT_RECORD_BYTES_MAX)
		return send_in_memfd(supervisor, bytes, length, writer);
	struct keeper_message message = {.kind = KEEPER_RECORD,
					 .slot = slot,
					 .fd_count = (uint32_t)writer->fd_count,
					 .length = (uint32_t)length};
	int failure = keeper_channel_send(supervisor->keeper.channel, &message, writer->fds,
					  writer->fds, bytes);
	if (groups && failure == 0) {
		free(supervisor->kept_groups);
		supervisor->kept_groups = bytes;
		supervisor->kept_groups_length = length;
		return 0;
	}
	free(bytes);
	return failure;
}

static void write_corral(struct supervisor *supervisor, struct handover_writer *writer)
{
	json_object_set_new(writer->root, "format", json_integer(HANDOVER_FORMAT));
	json_object_set_new(writer->root, "version", json_string(CORRAL_VERSION));
	upgrade_state_write_corral(supervisor, writer, NULL);
}

static void write_groups(struct supervisor *supervisor, struct handover_writer *writer)
{
	json_t *groups = json_array();
	for (size_t i = 0; i < supervisor->group_count; i++)
		json_array_append_new(groups, upgrade_group_write(supervisor->groups[i]));
	json_object_set_new(writer->root, "groups", groups);
	json_object_set_new(writer->root, "supervisor", upgrade_counters_write(supervisor));
}

/* One record; false when the keeper could not take it now (its socket
 * is full: tried again at the next turn). */
static bool send_part(struct supervisor *supervisor, uint32_t slot,
		      void (*write)(struct supervisor *, struct handover_writer *),
		      const char *what)
{
	struct handover_writer writer;
	handover_writer_init(&writer);
	writer.for_restore = true;
	write(supervisor, &writer);
	int failure = send_record(supervisor, slot, &writer);
	handover_writer_free(&writer);
	if (failure == -EAGAIN)
		return false;
	if (failure < 0)
		keeper_failed(supervisor, what, failure);
	return true;
}

static bool send_task(struct supervisor *supervisor, struct task *task)
{
	if (supervisor->keeper_gone)
		return true;
	char error[256];
	if (!task_handover_possible(task, error, sizeof(error))) {
		if (task->keeper_unsettled)
			return true;
		struct keeper_message message = {.kind = KEEPER_UNSETTLED,
						 .slot = task->keeper_slot};
		int failure =
		    keeper_channel_send(supervisor->keeper.channel, &message, NULL, NULL, NULL);
		if (failure == -EAGAIN)
			return false;
		task->keeper_unsettled = true;
		/* Sent again once it settles: a change marks it then. */
		task->keeper_changed = false;
		return true;
	}
	struct handover_writer writer;
	handover_writer_init(&writer);
	writer.for_restore = true;
	json_decref(writer.root);
	writer.root = task_handover_write(&writer, task);
	int failure = send_record(supervisor, task->keeper_slot, &writer);
	handover_writer_free(&writer);
	if (failure == -EAGAIN)
		return false;
	bool said = task->keeper_unsettled; /* a record too big is said once */
	task->keeper_changed = task->keeper_unsettled = false;
	if (failure == -EMSGSIZE) {
		/* Not kept as it is: its last record is marked, and a restore
		 * would handle the task as a crash. */
		struct keeper_message message = {.kind = KEEPER_UNSETTLED,
						 .slot = task->keeper_slot};
		keeper_channel_send(supervisor->keeper.channel, &message, NULL, NULL, NULL);
		task->keeper_unsettled = true;
		if (said)
			return true;
	}
	if (failure < 0)
		keeper_failed(supervisor, task->config->full_name, failure);
	return true;
}

static bool corral_changed(struct supervisor *supervisor)
{
	return supervisor->kept_config != supervisor->config ||
	       supervisor->kept_config_scaled != supervisor->config->scaled_count;
}

/* The chunks made since the last flush, in records of KEPT_CHUNKS_A_RECORD
 * (the last one sent again with its new ones). False: try again. */
static bool send_chunks(struct supervisor *supervisor)
{
	const struct task_records *records = &supervisor->task_records;
	size_t first = supervisor->kept_chunks / KEPT_CHUNKS_A_RECORD * KEPT_CHUNKS_A_RECORD;
	for (size_t at = first; at < records->chunk_count; at += KEPT_CHUNKS_A_RECORD) {
		struct handover_writer writer;
		handover_writer_init(&writer);
		writer.for_restore = true;
		json_t *chunks = json_array();
		for (size_t i = at; i < records->chunk_count && i < at + KEPT_CHUNKS_A_RECORD;
		     i++) {
			int fd = task_records_chunk_fd(records, i);
			if (fd >= 0)
				json_array_append_new(
				    chunks, json_pack("{s:o}", "fd", handover_fd(&writer, fd)));
		}
		json_object_set_new(writer.root, "task_records", chunks);
		int failure = send_record(
		    supervisor, KEPT_CHUNKS_SLOT + (uint32_t)(at / KEPT_CHUNKS_A_RECORD), &writer);
		handover_writer_free(&writer);
		if (failure == -EAGAIN)
			return false;
		if (failure < 0)
			keeper_failed(supervisor, "the task records", failure);
	}
	supervisor->kept_chunks = records->chunk_count;
	return true;
}

/* The REAPED acted on are in the records sent above: the keeper may
 * forget them. False: try again. */
static bool send_seen(struct supervisor *supervisor)
{
	if (supervisor->keeper_gone ||
	    supervisor->keeper_reaped_told == supervisor->keeper_reaped_number)
		return true;
	struct keeper_message message = {.kind = KEEPER_SEEN,
					 .slot = supervisor->keeper_reaped_number};
	int failure = keeper_channel_send(supervisor->keeper.channel, &message, NULL, NULL, NULL);
	if (failure == -EAGAIN)
		return false;
	if (failure < 0)
		keeper_failed(supervisor, "the exits acted on", failure);
	supervisor->keeper_reaped_told = supervisor->keeper_reaped_number;
	return true;
}

static void reap_recorded(struct supervisor *supervisor);

static void flush(struct loop_idle *idle)
{
	struct supervisor *supervisor = idle->data;
	bool whole = true;
	if (corral_changed(supervisor)) {
		if (send_part(supervisor, KEPT_CORRAL_SLOT, write_corral, "corral itself")) {
			supervisor->kept_config = supervisor->config;
			supervisor->kept_config_scaled = supervisor->config->scaled_count;
		} else {
			whole = false;
		}
	}
	if (whole && supervisor->kept_chunks != supervisor->task_records.chunk_count)
		whole = send_chunks(supervisor);
	for (size_t i = 0; whole && i < supervisor->group_count; i++)
		for (size_t t = 0; whole && t < supervisor->groups[i]->task_count; t++) {
			struct task *task = supervisor->groups[i]->tasks[t];
			if (task->keeper_changed && task->keeper_slot)
				whole = send_task(supervisor, task);
		}
	if (whole)
		whole = send_part(supervisor, KEPT_GROUPS_SLOT, write_groups, "the groups");
	if (whole)
		whole = send_seen(supervisor);
	/* A keeper that cannot take more now (a full socket) gets the rest
	 * at the next turn; the zombies wait for it. */
	if (!whole)
		request_flush(supervisor);
	else
		reap_recorded(supervisor);
}

/* Zombies whose exits the records now being sent say: reaped once they
 * are with the keeper. */
static void reap_recorded(struct supervisor *supervisor)
{
	for (size_t i = 0; i < supervisor->kept_zombie_count; i++) {
		siginfo_t reaped;
		waitid(P_PID, (id_t)supervisor->kept_zombies[i], &reaped, WEXITED | WNOHANG);
	}
	supervisor->kept_zombie_count = 0;
}

static void reap_after(void *context, pid_t pid)
{
	struct supervisor *supervisor = context;
	if (supervisor->kept_zombie_count == supervisor->kept_zombie_capacity) {
		supervisor->kept_zombie_capacity = supervisor->kept_zombie_capacity * 2 + 16;
		supervisor->kept_zombies =
		    xreallocarray(supervisor->kept_zombies, supervisor->kept_zombie_capacity,
				  sizeof(*supervisor->kept_zombies));
	}
	supervisor->kept_zombies[supervisor->kept_zombie_count++] = pid;
	request_flush(supervisor);
}

static void wanted(void *context)
{
	struct supervisor *supervisor = context;
	request_flush(supervisor);
}

void kept_state_changed(struct supervisor *supervisor)
{
	if (supervisor->keeper.channel >= 0)
		wanted(supervisor);
}

/* REAPED: a task taken back is the keeper's child; what else the keeper
 * reaps (a hook or probe of the loop that died) is no task's. */
static void on_keeper(struct loop_watch *watch, uint32_t events)
{
	struct supervisor *supervisor = watch->data;
	static char buffer[KEEPER_MESSAGE_MAX] __attribute__((aligned(8)));
	for (;;) {
		struct keeper_received received;
		int result = keeper_channel_receive(watch->fd, buffer, &received);
		if (result == -EAGAIN)
			return;
		if (result < 0) {
			if (result == -EPIPE || (events & (EPOLLHUP | EPOLLERR))) {
				/* The keeper is gone: PR_SET_PDEATHSIG stops corral. */
				loop_watch_remove(supervisor->loop, watch);
			}
			return;
		}
		if (received.message.kind != KEEPER_REAPED)
			continue;
		/* Acted on below; SEEN at the end of the turn, after the
		 * records (a REAPED sent again after a restore finds its task
		 * ended already, or another pid: nothing). */
		supervisor->keeper_reaped_number = received.message.slot;
		wanted(supervisor);
		struct task *task = pid_index_get(&supervisor->task_pids, received.message.pid);
		if (!task)
			continue;
		task->keeper_reaped = true;
		task->keeper_wait_status = received.message.status;
		task_reap(task);
		/* Taken by this reap, or of no run of the task's any more. */
		task->keeper_reaped = false;
	}
}

void kept_state_open(struct supervisor *supervisor)
{
	supervisor->kept_document_fd = -1;
	loop_idle_init(&supervisor->keeper_flush, flush, supervisor);
	if (supervisor->keeper.channel < 0)
		return;
	supervisor->services.keeper_wanted = wanted;
	supervisor->services.keeper_reap_after = reap_after;
	supervisor->services.keeper_context = supervisor;
	supervisor->keeper_watch = (struct loop_watch){
	    .fd = supervisor->keeper.channel, .callback = on_keeper, .data = supervisor};
	loop_watch_add(supervisor->loop, &supervisor->keeper_watch, EPOLLIN);
	wanted(supervisor);
}

void kept_state_close(struct supervisor *supervisor)
{
	reap_recorded(supervisor);
	free(supervisor->kept_zombies);
	supervisor->kept_zombies = NULL;
	free(supervisor->kept_groups);
	supervisor->kept_groups = NULL;
	if (supervisor->kept_document_fd >= 0)
		close(supervisor->kept_document_fd);
	supervisor->kept_document_fd = -1;
	if (supervisor->keeper.channel < 0)
		return;
	loop_idle_cancel(supervisor->loop, &supervisor->keeper_flush);
	loop_watch_remove(supervisor->loop, &supervisor->keeper_watch);
}
