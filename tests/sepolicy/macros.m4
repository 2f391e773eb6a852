dnl SPDX-License-Identifier: MIT
dnl macros.m4: stand-ins for the AOSP policy macros init/sepolicy/psi-lmkd.te
dnl uses, written here from their documented meaning (what each allows),
dnl not AOSP's te_macros / global_macros: enough for checkpolicy to compile
dnl the fragment and for tests/test-android.sh to compare it with lmkd's rules.
define(`global_capability_class_set', `{ capability cap_userns }')
define(`r_file_perms', `{ getattr open read ioctl lock map watch }')
define(`rw_file_perms', `{ getattr open read ioctl lock map watch append write }')
define(`r_dir_perms', `{ getattr open read search ioctl lock watch }')
define(`r_dir_file', `
allow $1 $2:dir r_dir_perms;
allow $1 $2:{ file lnk_file } r_file_perms;')
define(`init_daemon_domain', `
type_transition init $1_exec:process $1;
allow init $1_exec:file { getattr open read execute map };
allow init $1:process transition;
allow $1 $1_exec:file { entrypoint getattr open read execute map };')
define(`unix_socket_connect', `
allow $1 $2_socket:sock_file write;
allow $1 $3:unix_stream_socket connectto;')
define(`get_prop', `
allow $1 $2:file { getattr open read map };')
define(`set_prop', `
unix_socket_connect($1, property, init)
allow $1 $2:property_service set;
get_prop($1, $2)')
