// Package discover finds what a node really has: its usable CPUs and NUMA
// layout (sysfs, narrowed by the process's own cpuset), its NVIDIA GPUs and
// how they are linked (nvidia-smi), and its RDMA NICs (sysfs). Every source
// is injected (an fs.FS for sysfs and procfs, a function for nvidia-smi), so
// tests read fixture trees taken from real machines and the static binary
// needs no cgo or NVML.
//
// Everything read is validated: malformed input is an error naming the file
// or field, never a panic. A missing optional source (no nvidia-smi, no
// InfiniBand, no NUMA in sysfs) is not an error; Inventory.Notes says what is
// missing and why.
//
// Its subpackage fake builds simulated machines that Discover reads as it
// reads real ones (lockstep dev's nodes); services/agent/health watches the
// GPUs found here.
package discover
