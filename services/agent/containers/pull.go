package containers

import (
	"context"

	"github.com/cockroachdb/errors"
)

// Pulled is what making an image present found.
type Pulled struct {
	// Pulled is false when the engine had the image already.
	Pulled bool
	// Bytes is the image's size on this engine.
	Bytes int64
}

// Pull makes image present as policy says (Ensure) and reads its size:
// a container gang's pull phase, reported to gang before any rank starts.
func (d *Docker) Pull(ctx context.Context, image, policy string) (Pulled, error) {
	pulled, err := d.Ensure(ctx, image, policy)
	if err != nil {
		return Pulled{}, err
	}
	info, err := d.c.ImageInspect(ctx, image)
	if err != nil {
		return Pulled{Pulled: pulled}, errors.Wrapf(err, "inspect image %s", image)
	}
	return Pulled{Pulled: pulled, Bytes: info.Size}, nil
}
