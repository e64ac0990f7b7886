package config

import "context"

// Serve is the whole of a service's Run: it starts the service (Start,
// with opts), hands what it started to serve, and closes it once serve
// returns. Start's error comes back as it is.
func Serve(ctx context.Context, service string, cfg Settings, serve func(st *Started) error, opts ...StartOption) error {
	st, err := Start(ctx, service, cfg, opts...)
	if err != nil {
		return err
	}
	defer st.Close()
	return serve(st)
}
