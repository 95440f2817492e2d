/* When corral is the machine's init (PID 1 of the initial pid namespace,
 * e.g. /init of an initramfs), not only a container's PID 1: it mounts
 * what an init provides, and powers the machine off when it exits, where
 * an init that exits would make the kernel panic. */
#pragma once

#include <stdbool.h>

/* Mounts /proc, /sys, /dev (devtmpfs) and /sys/fs/cgroup (cgroup2) where
 * they are missing, when PID 1 finds no /proc (a container runtime always
 * mounts it). Returns true when corral is the machine's init. */
bool machine_init_prepare(void);

/* What machine_init_prepare() found, for messages. */
bool machine_init_active(void);

/* Syncs and powers off. main() printed "corral: exiting with code N" on
 * the console just before: that is how a VM's host reads the code. */
void machine_init_power_off(void);
