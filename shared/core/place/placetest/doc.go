// Package placetest builds placement fixtures: nodes, snapshots,
// gangs and generated fabrics, for tests and benchmarks of placement and
// the queue policy (and the simulator). Import it from tests only.
//
//	snap := placetest.MakeCluster().
//		Add(placetest.MakeNode("n1").GPUs(8).Leaf("leaf-1").Spine("spine-1").Used(4)).
//		Obj()
//	req := placetest.MakeGang(2, 8).MaxSwitches(1, 15*time.Minute).Obj()
package placetest
