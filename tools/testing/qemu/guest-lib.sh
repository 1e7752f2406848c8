# Helpers shared by the guest runner and the shell selftests.
JOULES_KO=/lib/joules/joules.ko

joules_loaded() { [ -d /sys/module/joules ]; }

# Load the module and mount its per-pid files, as the installed udev rule does.
joules_load() {
	joules_loaded || insmod "$JOULES_KO" "$@" || return 1
	if [ -d /proc/energy ] && ! grep -q ' /proc/energy ' /proc/mounts; then
		if grep -q joulesfs /proc/filesystems; then
			mount -t joulesfs joulesfs /proc/energy || return 1
		fi
	fi
	return 0
}

joules_unload() {
	if grep -q ' /proc/energy ' /proc/mounts; then
		umount /proc/energy || return 1
	fi
	! joules_loaded || rmmod joules
}
