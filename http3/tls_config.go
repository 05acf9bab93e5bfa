package http3

import "crypto/tls"

// ConfigureTLSConfig returns a copy of tlsConf for an HTTP/3 server's
// quic.Listener: its NextProtos is exactly ["h3"], as with quic-go's
// function of the same name, and a config its GetConfigForClient
// returns gets the same treatment. tlsConf is not modified. Server
// does this itself for the listeners it makes; use it with
// quic.ListenAddr and Server.ServeListener.
func ConfigureTLSConfig(tlsConf *tls.Config) *tls.Config {
	c := tlsConf.Clone()
	if c == nil {
		c = &tls.Config{}
	}
	c.NextProtos = []string{NextProtoH3}
	if gfc := c.GetConfigForClient; gfc != nil {
		c.GetConfigForClient = func(ch *tls.ClientHelloInfo) (*tls.Config, error) {
			conf, err := gfc(ch)
			if conf == nil || err != nil {
				return conf, err
			}
			return ConfigureTLSConfig(conf), nil
		}
	}
	return c
}
