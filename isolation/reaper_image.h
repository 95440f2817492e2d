/* corral's reaper program (isolation/reaper/), its bytes embedded in corral
 * and handed to isolated tasks as a sealed memfd.
 *
 * Why a memfd and not a file: the reaper is exec'd inside the task, after
 * its namespaces (and, with a root file system, its pivot_root) are in
 * place, where no path to corral's files need exist. execveat(fd, "",
 * AT_EMPTY_PATH) on an fd opened beforehand needs no path; the program
 * needs no loader and no library. The seals make the bytes immutable: no
 * task, and no bug in corral, can change what every later task runs as its
 * PID 1. */
#pragma once

#include <stddef.h>

/* The embedded program. */
extern const unsigned char reaper_image[];
size_t reaper_image_size(void);

/* A new memfd (CLOEXEC) holding the program, sealed against writes,
 * resizing and further seals. Returns the fd or -errno. */
int reaper_image_memfd(void);
