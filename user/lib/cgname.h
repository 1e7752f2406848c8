/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a cgroup (v2) path says about what runs in it. Container runtimes,
 * the kubelet and systemd name their cgroups after what they put there:
 *
 *   /system.slice/docker-<64 hex>.scope                 docker (systemd driver)
 *   /docker/<64 hex>                                    docker (cgroupfs driver)
 *   /system.slice/nerdctl-<64 hex>.scope                containerd (nerdctl)
 *   /default/<64 hex>, /k8s.io/<64 hex>                 containerd (cgroupfs, by namespace)
 *   .../cri-containerd-<64 hex>.scope                   containerd's CRI plugin
 *   .../crio-<64 hex>.scope, crio-conmon-<64 hex>.scope CRI-O, its conmon
 *   /machine.slice/libpod-<64 hex>.scope                Podman (also rootless, under
 *   .../libpod-conmon-<64 hex>.scope                      user@UID.service), its conmon
 *   /kubepods.slice/kubepods-burstable.slice/
 *     kubepods-burstable-pod<uid with _ for ->.slice/   a Kubernetes pod (systemd driver;
 *                                                        guaranteed pods sit directly in
 *                                                        kubepods.slice: kubepods-pod<uid>)
 *   /kubepods/burstable/pod<uid>/<64 hex>               the same, cgroupfs driver
 *   /system.slice/nginx.service, session-2.scope        systemd units
 *
 * cgname_parse() reads all of that from the path alone: no runtime socket,
 * no Kubernetes API, no file system. Pod names are not in cgroup paths;
 * join on the pod UID (kube-state-metrics' kube_pod_info{uid}).
 */
#ifndef JOULES_CGNAME_H
#define JOULES_CGNAME_H

#include <stdbool.h>

#define CGN_ID_LEN 64 /* container ids: 64 lowercase hex digits */
#define CGN_SHORT_ID_LEN 12 /* as `docker ps` shows them */
#define CGN_UID_LEN 36 /* pod UIDs: 8-4-4-4-12 hex; static pods' are 32 hex */
#define CGN_UNIT_LEN 256 /* systemd's limit on a unit name */

/* What the cgroup itself (its last path component) is. */
enum cgn_kind {
	CGN_OTHER, /* none of the below, e.g. a cgroup inside a container */
	CGN_ROOT, /* "/" */
	CGN_CONTAINER, /* a container's own cgroup */
	CGN_MONITOR, /* a runtime's monitor of one container (conmon) */
	CGN_POD, /* a Kubernetes pod */
	CGN_QOS, /* a pod QoS class: kubepods-burstable, kubepods-besteffort */
	CGN_SERVICE, /* systemd units that are none of the above */
	CGN_SCOPE,
	CGN_SLICE,
	CGN_NR_KINDS
};

/* "other", "root", "container", "monitor", "pod", "qos", "service", ... */
extern const char *const cgn_kind_names[CGN_NR_KINDS];

struct cgname {
	enum cgn_kind kind;
	/*
	 * The innermost container on the path (the cgroup's own, or the one
	 * it is inside of), and who runs it: "docker", "containerd",
	 * "cri-o", "podman", or NULL when the path does not say (a bare id
	 * in a cgroupfs-driver pod). "" and NULL when there is none.
	 */
	char container_id[CGN_ID_LEN + 1];
	const char *runtime;
	/*
	 * That container is a bare id directly in a cgroupfs-driver pod
	 * ("pod<uid>/<id>"): the CRI runtime is not named, the kubelet's
	 * naming is all there is.
	 */
	bool in_cgroupfs_pod;
	/*
	 * Where that container's cgroup is: directly in a pod (in_pod), and
	 * its component's index (0 for the path's first). Containers are
	 * made directly in a pod or in a runtime's top-level cgroup; one
	 * deeper was made by whoever could make cgroups there.
	 */
	bool in_pod;
	unsigned int container_depth;
	/*
	 * The kubepods tree in force starts below the path's first component
	 * (a node inside a container, or cgroups someone named so): its pods
	 * are only as believable as whoever could make cgroups there.
	 */
	bool kube_nested;
	/* The innermost pod on the path, with dashes; "" if none. */
	char pod_uid[CGN_UID_LEN + 1];
	/* "guaranteed", "burstable", "besteffort"; NULL outside pods and classes. */
	const char *qos;
	/* The innermost systemd unit (.service, .scope, .slice, ...); "" if none. */
	char unit[CGN_UNIT_LEN];
};

/*
 * Recognize path ("/" or "" is the root; leading and repeated slashes
 * are ignored). Never fails: what is not recognized is left empty.
 */
void cgname_parse(const char *path, struct cgname *n);

/* Number of components below the root: "/" 0, "/a" 1, "/a/b" 2. */
unsigned int cgname_depth(const char *path);

/* Is s a valid container id (exactly 64 lowercase hex digits)? */
bool cgname_is_id(const char *s, unsigned int len);

#endif /* JOULES_CGNAME_H */
