package place

// Filter names.
const (
	filterUp      = "up"
	filterDrained = "not-drained"
	filterHealthy = "healthy-gpus"
	filterGPUs    = "free-gpus"
	filterBinding = "binding"
)

// registry maps filter names to constructors; stack.go picks the order.
// A new filter is a file with its type plus one line here and one in
// stackOrder.
var registry = map[string]func() filter{
	filterUp:      func() filter { return upFilter{} },
	filterDrained: func() filter { return drainedFilter{} },
	filterHealthy: func() filter { return healthyFilter{} },
	filterGPUs:    func() filter { return gpusFilter{} },
	filterBinding: func() filter { return bindingFilter{} },
	filterModel:   func() filter { return gpuModelFilter{} },
	filterRuntime: func() filter { return runtimeFilter{} },
}
