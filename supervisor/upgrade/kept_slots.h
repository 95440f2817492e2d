/* The keeper's slots for the loop's records (kept_state.c writes them,
 * restore_document.c reads them back). */
#pragma once

/* corral's own part: the config's texts, the cgroup tree, the listeners. */
#define KEPT_CORRAL_SLOT 0
/* The groups' lifecycle and corral's counters. */
#define KEPT_GROUPS_SLOT 1
/* Tasks take slots from 2 up (task_keeper.c), never this far. */
#define KEPT_CHUNKS_SLOT 0x80000000u
/* The task records' memfd chunks (task_records.h), this many a record:
 * slot KEPT_CHUNKS_SLOT + k holds chunks k * KEPT_CHUNKS_A_RECORD on. */
#define KEPT_CHUNKS_A_RECORD 16
