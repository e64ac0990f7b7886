// Package health decides whether a node's GPUs, and the node itself, are fit
// for work. A Checker polls three sources and returns a Report; Diff turns
// two successive Reports into the transitions the agent announces (one
// gpu-unhealthy event when a GPU goes bad, not one per poll).
//
// # nvidia-smi
//
// Each poll runs
//
//	nvidia-smi --query-gpu=index,uuid,pci.bus_id,ecc.errors.uncorrected.volatile.total,
//	    retired_pages.pending,remapped_rows.pending,remapped_rows.failure --format=csv,noheader,nounits
//
// through the same injectable runner discovery uses (discover.SMI). A GPU is
// unhealthy when
//
//   - ecc.errors.uncorrected.volatile.total is above zero (uncorrectable ECC
//     errors since the driver loaded),
//   - retired_pages.pending or remapped_rows.pending is Yes (bad memory
//     waits for a reboot or GPU reset to be retired or remapped),
//   - remapped_rows.failure is Yes (the GPU ran out of spare rows),
//   - a value reads "[GPU is lost]", nvidia-smi prints "Unable to determine
//     the device handle for GPU <bus id>: …" for it, or it is missing from
//     the poll although discovery listed it: it fell off the bus.
//
// Values nvidia-smi cannot give — "[N/A]", "[Not Supported]", "[Unknown
// Error]", any other bracketed text — are no evidence either way: GeForce
// boards have no ECC, Hopper reports retired_pages.pending as [N/A] because
// it remaps rows instead, and MIG mode hides the row remapper. When a driver
// rejects a field (`Field "x" is not a valid field to query.`, drivers
// before row remapping existed) the Checker drops it and asks again.
//
// When nvidia-smi yields nothing at all (the driver is gone, the command
// timed out), the node gets a node-level reason and each GPU keeps its
// previous state: not seeing a GPU for one poll is not evidence that it
// broke, while a node whose GPUs cannot be seen must take no new work.
//
// # Xid errors
//
// nvidia-smi does not report Xid errors; the driver writes them to the
// kernel log ("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the
// bus."). A Checker given a KernelLog (text logged since its previous call)
// marks the GPU at that PCI address unhealthy for the Xids in HardwareXIDs,
// and keeps it so — a log line is seen once — until Resume is called for it
// (`lockstep node resume`). Xids that blame the application (13, 31, 43, …)
// are ignored.
//
// # Health-check program
//
// Like Slurm's HealthCheckProgram, an optional program runs on every poll
// with a timeout (60 s by default, as in Slurm), no arguments, and its
// standard output and error captured (the first 64 KiB):
//
//   - exit status 0: healthy; the output is ignored.
//
//   - non-zero: unhealthy. Lines of the form
//
//     gpu <index>: <reason>
//     gpu <uuid>: <reason>
//
//     ("gpu" in any case) withdraw just those GPUs, each with its reason.
//     Without such a line the whole node is withdrawn, with the first
//     non-empty line of output as the reason.
//
//   - killed at the timeout, or not runnable: the node is withdrawn, and the
//     reason says so.
//
// A line naming a GPU this node does not have withdraws the node instead,
// since the program saw something the agent cannot place.
//
// Everything read is bounded and sanitised: garbage, huge lines and control
// characters become notes or are cut, never a panic or an unbounded reason.
package health
