package http3

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The alternative-service cache is saved as JSON, as browsers keep theirs
// across restarts:
//
//	{"version": 1, "origins": [{"origin": "example.com:443",
//	  "alternatives": [{"host": "", "port": 443, "expires": "2026-...", "persist": false}],
//	  "broken": [{"authority": "example.com:443", "until": "2026-...", "count": 1}]}]}
//
// Times are absolute (RFC 3339). Loading checks every field as the
// Alt-Svc parser would and skips what is expired or malformed; the file
// is bounded like the cache (maxAltSvcFileSize, the cache's size limits).

// altSvcFileVersion is the version of the file format.
const altSvcFileVersion = 1

// maxAltSvcFileSize bounds the file read: about 1,000 origins with
// their alternatives and marks take 300 KB.
const maxAltSvcFileSize = 8 << 20

type altSvcFile struct {
	Version int              `json:"version"`
	Origins []altSvcFileOrig `json:"origins"`
}

type altSvcFileOrig struct {
	Origin       string             `json:"origin"`
	Alternatives []altSvcFileAlt    `json:"alternatives,omitempty"`
	Broken       []altSvcFileBroken `json:"broken,omitempty"`
}

type altSvcFileAlt struct {
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Expires time.Time `json:"expires"`
	Persist bool      `json:"persist,omitempty"`
}

type altSvcFileBroken struct {
	Authority string    `json:"authority"`
	Until     time.Time `json:"until"`
	Count     int       `json:"count"`
}

// save writes the cache's fresh alternatives and its broken marks to w.
func (c *altSvcCache) save(w io.Writer) error {
	c.mu.Lock()
	now := c.now()
	f := altSvcFile{Version: altSvcFileVersion}
	for origin, st := range c.origins {
		o := altSvcFileOrig{Origin: origin}
		for _, a := range st.alts {
			if now.Before(a.expires) {
				o.Alternatives = append(o.Alternatives, altSvcFileAlt{Host: a.host, Port: a.port, Expires: a.expires.UTC(), Persist: a.persist})
			}
		}
		for auth, m := range st.broken {
			o.Broken = append(o.Broken, altSvcFileBroken{Authority: auth, Until: m.until.UTC(), Count: m.count})
		}
		if len(o.Alternatives) > 0 || len(o.Broken) > 0 {
			f.Origins = append(f.Origins, o)
		}
	}
	c.mu.Unlock()
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(&f)
}

// load adds the entries of a file written by save to the cache, within
// its bounds, skipping those expired or malformed. Origins already in the
// cache keep what they have.
func (c *altSvcCache) load(r io.Reader) error {
	var f altSvcFile
	dec := json.NewDecoder(io.LimitReader(r, maxAltSvcFileSize))
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("http3: Alt-Svc cache file: %w", err)
	}
	if f.Version != altSvcFileVersion {
		return fmt.Errorf("http3: Alt-Svc cache file version %d, want %d", f.Version, altSvcFileVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, o := range f.Origins {
		if !validCacheAuthority(o.Origin) || c.origins[o.Origin] != nil {
			continue
		}
		st := &originState{}
		for _, a := range o.Alternatives {
			if len(st.alts) == maxAltsPerOrigin || !now.Before(a.Expires) || a.Port < 1 || a.Port > 65535 {
				continue
			}
			if a.Host != "" && !validAltHost(a.Host) {
				continue
			}
			// An expiry further than Alt-Svc could give is cut there.
			exp := a.Expires
			if exp.After(now.Add(maxAltSvcAge)) {
				exp = now.Add(maxAltSvcAge)
			}
			st.alts = append(st.alts, altEntry{host: a.Host, port: a.Port, expires: exp, persist: a.Persist})
		}
		for _, b := range o.Broken {
			if len(st.broken) == maxBrokenPerOrigin || !validCacheAuthority(b.Authority) || b.Count < 1 || b.Count > 64 {
				continue
			}
			until := b.Until
			if until.After(now.Add(maxBrokenDelay)) {
				until = now.Add(maxBrokenDelay)
			}
			if st.broken == nil {
				st.broken = make(map[string]brokenMark)
			}
			c.tick++
			st.broken[b.Authority] = brokenMark{until: until, count: b.Count, set: c.tick}
		}
		if len(st.alts) == 0 && len(st.broken) == 0 {
			continue
		}
		if len(c.origins) >= c.max {
			c.evictOldest()
		}
		c.tick++
		st.used = c.tick
		c.origins[o.Origin] = st
	}
	return nil
}

// validCacheAuthority reports whether s is host:port as originKey and
// altEntry.authority make them.
func validCacheAuthority(s string) bool {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != ps {
		return false
	}
	return validAltHost(host)
}

// validAltHost reports whether h is a host name or an IP address (without
// brackets) the Alt-Svc parser would accept.
func validAltHost(h string) bool {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Zone() == ""
	}
	return validHostName(h)
}

// saveFile writes the cache to path atomically: to a temporary file in
// the same directory, then renamed over path. The file is readable by its
// owner only: it tells which sites the user visited.
func (c *altSvcCache) saveFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	err = c.save(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// loadFile loads the cache from path; a missing file is not an error.
func (c *altSvcCache) loadFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return c.load(f)
}
