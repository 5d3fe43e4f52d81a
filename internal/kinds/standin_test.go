package kinds

// standInConfig is the settings of a served kind of no engine, for the tests of what every
// served kind's settings share (their keys, their checks, the flags given beside them) without
// an engine's own kind: a server's options, HTTP/2 and replicas inlined, and an option of its
// own.
type standInConfig struct {
	ServerConfig `yaml:",inline"`
	HTTP2Config  `yaml:",inline"`
	Replication  `yaml:",inline"`
	// Bin stands for an engine's binary (opa_bin, openfga_bin).
	Bin string `yaml:"stand_in_bin"`
}

func (c *standInConfig) Check() error {
	return CheckServed(&c.ServerConfig, &c.HTTP2Config, c.Replication, nil)
}
