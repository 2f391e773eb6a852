/* caps: what the daemon may do, read through libcap. */
#pragma once

#include <stdbool.h>
#include <sys/capability.h>

/* true if cap is in the process's effective set */
bool caps_have(cap_value_t cap);
