package place

// masterPort picks the gang's master among the chosen nodes: the first, in
// rank order, whose address has a free MASTER_PORT (the lowest free port in
// [PortBase, PortBase+PortCount)). It moves that node to the front and
// returns the port, or false when no chosen address has one.
func masterPort(snap *Snapshot, nodes []int32) (int, bool) {
	for k, i := range nodes {
		if port, ok := freePort(snap, snap.Nodes[i].Node.Addr); ok {
			copy(nodes[1:k+1], nodes[:k])
			nodes[0] = i
			return port, true
		}
	}
	return 0, false
}

func freePort(snap *Snapshot, addr string) (int, bool) {
	used := snap.UsedPorts[addr]
	for p := snap.PortBase; p < snap.PortBase+snap.PortCount; p++ {
		if !used[p] {
			return p, true
		}
	}
	return 0, false
}
