package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards to a PostgreSQL server, for tests of what the gateway
// does when its database goes away. It can be cut (every connection
// closed, new ones refused) and restored, to simulate a database that is
// down, or frozen (connections stay open but nothing is forwarded) and
// thawed, to simulate one that hangs.
type Proxy struct {
	// URL is dbURL through the proxy, with a 1 s connect timeout.
	URL    string
	target string
	ln     net.Listener
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
	thawed chan struct{} // closed while not frozen
}

// NewProxy starts a proxy to dbURL's server; it stops when the test ends.
func NewProxy(t testing.TB, dbURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: u.Host, ln: ln, thawed: make(chan struct{})}
	close(p.thawed)
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	p.URL = u.String()
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut(); p.Thaw() })
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding each chunk while the proxy is frozen.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thawed := p.thawed
			p.mu.Unlock()
			<-thawed
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every connection and refuses new ones: a database that is down.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// Freeze stops forwarding: open connections and new ones stay up, and
// every query waits, as on a database that hangs.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default:
	}
}

// Thaw forwards again what Freeze held.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
}
