// Package fake simulates machines that look real to discovery: for a Shape
// (sockets, cores, SMT, NUMA nodes, GPUs and RDMA NICs per NUMA node) a
// Machine holds the sysfs and procfs files discover.Discover reads, in
// memory, and answers like nvidia-smi (`--query-gpu=… --format=csv…` and
// `topo -m`) from the same shape. `lockstep dev` gives each simulated node
// one, so its inventory comes out of the real discovery code, not a
// parallel simulation of it; WriteDir puts the tree on disk for
// `--sysfs-root`.
//
// The files are exactly those discovery reads, in the kernel's formats:
//
//	devices/system/cpu/online
//	devices/system/cpu/cpu<N>/topology/thread_siblings_list
//	devices/system/node/node<N>/{cpulist,meminfo}
//	bus/pci/devices/<bus id>/numa_node              (each GPU)
//	class/infiniband/mlx5_<N>/device/numa_node
//	class/infiniband/mlx5_<N>/ports/1/state         ("4: ACTIVE")
//	proc: self/status                               (Cpus_allowed_list)
//
// CPUs are numbered as Linux numbers them: the first thread of every core,
// then the second thread of every core (so on a DGX H100 cpu0 and cpu112
// share a core), with whole cores split evenly over NUMA nodes in order.
//
// SetFault breaks a GPU the way nvidia-smi would show it (uncorrectable ECC
// errors, pending row remapping, a GPU lost from the bus), so health checks
// and the gpu-unhealthy path can be exercised in dev.
package fake
