#include "base/dir_trust.h"

#include <unistd.h>

enum dir_trust dir_trust_of(const struct stat *status, bool sticky_is_enough)
{
	if (status->st_uid != geteuid() && status->st_uid != 0)
		return DIR_FOREIGN_OWNER;
	if ((status->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(sticky_is_enough && (status->st_mode & S_ISVTX)))
		return DIR_WRITABLE_BY_OTHERS;
	return DIR_TRUSTED;
}
