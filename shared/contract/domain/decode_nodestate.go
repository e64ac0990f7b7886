package domain

// DecodeNodeState decodes and checks an operator's node state, as the
// agent reads its own (an etcd record anyone with access can write).
func DecodeNodeState(data []byte) (NodeState, error) {
	return decode("node state", data, func(c *checker, st *NodeState) {
		c.text("reason", st.Reason, MaxReasonBytes)
	})
}
