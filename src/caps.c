/* caps: capability queries (libcap). Dropping capabilities lives here too
 * once the daemon does it. */
#include "caps.h"

bool caps_have(cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t c = cap_get_proc();

	if (!c)
		return false;
	if (cap_get_flag(c, cap, CAP_EFFECTIVE, &v) < 0)
		v = CAP_CLEAR;
	cap_free(c);
	return v == CAP_SET;
}
