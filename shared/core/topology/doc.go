// Package topology models a datacenter network for gang placement: which
// switches a set of nodes must cross to talk to each other, and which nodes
// share an NVLink-style block. It is pure data plus lookups; the only I/O is
// in the loaders, which take an io.Reader (or, for LoadFile, a path).
//
// # Model
//
// Switches form a tree of any depth (core → aggregation/spine → leaf/ToR),
// or several trees. Nodes attach to leaf switches only; a node is under
// exactly one leaf. A switch's level is its height: 0 for a leaf, and one
// more than its highest child otherwise (as in Slurm), so in a three-tier
// Clos the ToRs are level 0, the aggregation switches 1 and the core 2.
//
// LowestCommonLevel(nodes) is the level of the lowest switch above all of
// them, the highest level their traffic crosses: 0 when they share a leaf.
// Placement prefers gangs with a low value. Nodes outside the topology, or in
// separate trees, get Height(), worse than any real level.
//
// Blocks group nodes independently of the switch tree, like Slurm's
// topology/block: typically the nodes of one NVLink domain (an NVL72 rack).
// A node is in at most one block.
//
// Nodes that are not in the topology may still exist in the cluster; lookups
// for them report ok=false (or nil, -1).
//
// # Sources and precedence
//
// Agents report labels (leaf, spine, block) for their own node; FromLabels
// turns them into a leaf → spine tree, adding a synthetic "root" switch above
// several spines. An operator may also provide a topology file. Merge
// combines the two and the file wins: a node the file places keeps the
// file's placement (and likewise for block membership); a node only the
// labels know is added from the labels.
//
// # YAML format
//
// Every switch is listed once with either its child switches or its nodes.
// Node and child lists accept Slurm hostlist expressions (below). Unknown
// fields are rejected, and errors name the switch or block at fault.
//
//	switches:
//	  - name: core
//	    children: [spine-1, spine-2]
//	  - name: spine-1
//	    children: ["leaf-[1-2]"]
//	  - name: spine-2
//	    children: [leaf-3]
//	  - name: leaf-1
//	    nodes: ["node-[01-04]"]
//	  - name: leaf-2
//	    nodes: ["node-[05-08]"]
//	  - name: leaf-3
//	    nodes: [node-09, node-10]
//	blocks:                 # optional
//	  - name: nvl-1
//	    nodes: ["node-[01-08]"]
//
// # Slurm topology.conf
//
// An unmodified Slurm topology.conf is read as is: topology/tree lines
//
//	# two leaf switches and a spine
//	SwitchName=s0 Nodes=dgx[01-16] LinkSpeed=100
//	SwitchName=s1 Nodes=dgx[17-32]
//	SwitchName=s2 Switches=s[0-1]
//
// and topology/block lines
//
//	BlockName=b1 Nodes=dgx[01-04]
//	BlockName=b2 Nodes=dgx[05-08]
//	BlockSizes=4,8          # accepted and ignored
//
// Keys are case-insensitive, '#' starts a comment, and a line ending in '\'
// continues on the next. LinkSpeed must be a number and is otherwise ignored.
//
// # Hostlists
//
// Node and child lists are Slurm hostlists, expanded by slurmenv (the one
// parser of that syntax here, also behind SLURM_JOB_NODELIST and
// `scontrol show hostnames`): "n[01-04,07]" is n01 n02 n03 n04 n07 (zero
// padding follows the lower bound as written), "rack[1-2]-n[1-3]" is the
// product rack1-n1 ... rack2-n3, and "a,b,c" lists hosts; commas inside
// brackets do not separate hosts. An expression naming no host is an
// error.
//
// # Alibaba Lingjun trace
//
// LoadLingjunCSV reads the topology CSV of the Alibaba Lingjun 2023 dataset
// (header "ip,DSW,PSW,ASW": hashed host, core, aggregation and ToR switch).
// Hosts are renamed lj-0001, lj-0002, ... in file order (see
// LingjunNodeName); leaves are named "<PSW>/<ASW>" because ToR names repeat
// across aggregation switches. The 2023 file gives 847 nodes on 119 leaves
// under 3 aggregation switches and one core.
//
// LoadFile picks the loader by extension (.yaml/.yml, .conf, .csv; any of
// them optionally .gz).
package topology
