package topology

// specBuilder assembles a Spec from facts that arrive one node at a time
// (CSV rows, agent labels), keeping first-seen order and collapsing repeated
// parent/child links. Nodes are not de-duplicated, so a node reported twice
// still reaches New and is rejected there with a clear message.
type specBuilder struct {
	switches map[string]*SwitchSpec
	order    []string
	edges    map[[2]string]bool
	blocks   map[string]*BlockSpec
	bOrder   []string
}

func newSpecBuilder() *specBuilder {
	return &specBuilder{
		switches: make(map[string]*SwitchSpec),
		edges:    make(map[[2]string]bool),
		blocks:   make(map[string]*BlockSpec),
	}
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
	if s, ok := b.switches[name]; ok {
		return s
	}
	s := &SwitchSpec{Name: name}
	b.switches[name] = s
	b.order = append(b.order, name)
	return s
}

func (b *specBuilder) has(name string) bool { return b.switches[name] != nil }

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
	if bl, ok := b.blocks[name]; ok {
		return bl
	}
	bl := &BlockSpec{Name: name}
	b.blocks[name] = bl
	b.bOrder = append(b.bOrder, name)
	return bl
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
	for _, name := range b.order {
		if !child[name] {
			out = append(out, name)
		}
	}
	return out
}

func (b *specBuilder) spec() Spec {
	var s Spec
	for _, name := range b.order {
		s.Switches = append(s.Switches, *b.switches[name])
	}
	for _, name := range b.bOrder {
		s.Blocks = append(s.Blocks, *b.blocks[name])
	}
	return s
}
