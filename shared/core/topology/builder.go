package topology

// specBuilder assembles a Spec from facts that arrive one node at a time
// (CSV rows, agent labels), keeping first-seen order and collapsing repeated
// parent/child links. Nodes are not de-duplicated, so a node reported twice
// still reaches New and is rejected there with a clear message.
type specBuilder struct {
	switches firstSeen[SwitchSpec]
	edges    map[[2]string]bool
	blocks   firstSeen[BlockSpec]
}

func newSpecBuilder() *specBuilder {
	return &specBuilder{
		switches: firstSeen[SwitchSpec]{byName: make(map[string]*SwitchSpec)},
		edges:    make(map[[2]string]bool),
		blocks:   firstSeen[BlockSpec]{byName: make(map[string]*BlockSpec)},
	}
}

// firstSeen holds named items in the order they were first asked for.
type firstSeen[T any] struct {
	byName map[string]*T
	order  []string
}

// get returns the named item, creating it with newItem if needed.
func (f *firstSeen[T]) get(name string, newItem func() T) *T {
	if it, ok := f.byName[name]; ok {
		return it
	}
	it := new(newItem())
	f.byName[name] = it
	f.order = append(f.order, name)
	return it
}

// all copies the items in first-seen order.
func (f *firstSeen[T]) all() []T {
	var out []T
	for _, name := range f.order {
		out = append(out, *f.byName[name])
	}
	return out
}

// builderFrom starts from an existing Spec, as Merge does with the file.
func builderFrom(s Spec) *specBuilder {
	b := newSpecBuilder()
	for _, sw := range s.Switches {
		b.sw(sw.Name)
		for _, c := range sw.Children {
			b.addChild(sw.Name, c)
		}
		for _, n := range sw.Nodes {
			b.addNode(sw.Name, n)
		}
	}
	for _, bl := range s.Blocks {
		b.block(bl.Name)
		for _, n := range bl.Nodes {
			b.addBlockNode(bl.Name, n)
		}
	}
	return b
}

// sw returns the named switch, creating it if needed.
func (b *specBuilder) sw(name string) *SwitchSpec {
	return b.switches.get(name, func() SwitchSpec { return SwitchSpec{Name: name} })
}

func (b *specBuilder) has(name string) bool { return b.switches.byName[name] != nil }

func (b *specBuilder) addChild(parent, child string) {
	b.sw(child)
	p := b.sw(parent)
	if e := [2]string{parent, child}; !b.edges[e] {
		b.edges[e] = true
		p.Children = append(p.Children, child)
	}
}

func (b *specBuilder) addNode(leaf, node string) {
	s := b.sw(leaf)
	s.Nodes = append(s.Nodes, node)
}

func (b *specBuilder) block(name string) *BlockSpec {
	return b.blocks.get(name, func() BlockSpec { return BlockSpec{Name: name} })
}

func (b *specBuilder) addBlockNode(block, node string) {
	bl := b.block(block)
	bl.Nodes = append(bl.Nodes, node)
}

// tops returns the switches nobody lists as a child, in first-seen order.
func (b *specBuilder) tops() []string {
	child := make(map[string]bool, len(b.edges))
	for e := range b.edges {
		child[e[1]] = true
	}
	var out []string
	for _, name := range b.switches.order {
		if !child[name] {
			out = append(out, name)
		}
	}
	return out
}

func (b *specBuilder) spec() Spec {
	return Spec{Switches: b.switches.all(), Blocks: b.blocks.all()}
}
