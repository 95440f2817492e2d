/* The loop's side of the keeper's records (docs/decisions.md, "corral
 * outlives its own death"): the state of corral, of its groups and of
 * each task that changed, sent once the loop has nothing else to do,
 * each as a small hand-over document (handover.h, for_restore) with the
 * fds it names: one message, so that the keeper always holds a state and
 * its fds as of one moment. A task caught between two states it could
 * be taken back from (starting, being stopped, its hooks running: what
 * `corral upgrade` waits out) is not sent; the keeper is told once that
 * its last record is not what it does now, and a restore handles it as a
 * crash. And the keeper's REAPED messages: how a task taken back after a
 * restore (the keeper's child now) ended. */
#pragma once

struct supervisor;

/* With a keeper: the watch and the first records. */
void kept_state_open(struct supervisor *supervisor);
void kept_state_close(struct supervisor *supervisor);
/* corral's counters changed (a control request, a reload): sent with the
 * next records. */
void kept_state_changed(struct supervisor *supervisor);
