package sse_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/sim/simtest"
)

// The idle-stream benchmark's clients run in a child process: this test
// binary, started again with idleClientEnv set. What the app's side of
// 2,000 connections holds (over HTTP/1.1 a transport keeps two goroutines
// and two buffers per connection) is the phone's memory, not the
// gateway's; in one process it was counted with the gateway's.
const idleClientEnv = "VOXGATE_IDLE_CLIENT"

func TestMain(m *testing.M) {
	if raw := os.Getenv(idleClientEnv); raw != "" {
		os.Exit(runIdleClient(raw))
	}
	os.Exit(m.Run())
}

// idleClientConfig tells the child where its streams go.
type idleClientConfig struct {
	URL    string // a gateway's or proxy's base URL, or the simulator's
	Direct bool   // post Body to the simulator's completions route
	H2     bool   // HTTP/2 without TLS to a gateway or proxy
	Body   []byte // the completion request, for Direct
	CA     []byte // the simulator's certificate (DER), for Direct
}

// idleClient is the running child: each open starts one more stream,
// held until close.
type idleClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startIdleClient(b *testing.B, cfg idleClientConfig) *idleClient {
	b.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := &idleClient{cmd: exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")}
	c.cmd.Env = append(os.Environ(), idleClientEnv+"="+string(raw))
	c.cmd.Stderr = os.Stderr // what went wrong in the child, beside the benchmark's output
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.close() })
	return c
}

func (c *idleClient) open() error {
	_, err := c.stdin.Write([]byte{'\n'})
	return err
}

// close ends every stream and waits for the child to exit.
func (c *idleClient) close() error {
	if c.cmd.ProcessState != nil {
		return nil
	}
	_ = c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("idle client: %v", err)
	}
	return nil
}

// runIdleClient is the child: a stream for each line on stdin, every one
// held open until stdin closes.
func runIdleClient(raw string) int {
	var cfg idleClientConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	transport := &http.Transport{MaxIdleConnsPerHost: -1}
	if cfg.Direct {
		cert, err := x509.ParseCertificate(cfg.CA)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		roots := x509.NewCertPool()
		roots.AddCert(cert)
		transport.TLSClientConfig = &tls.Config{RootCAs: roots}
		transport.ForceAttemptHTTP2 = true
	} else if cfg.H2 {
		transport.Protocols = new(http.Protocols)
		transport.Protocols.SetUnencryptedHTTP2(true)
	}
	client := &http.Client{Transport: transport}
	ctx, cancel := context.WithCancel(context.Background())
	var open sync.WaitGroup
	var failed sync.Once
	in := bufio.NewScanner(os.Stdin)
	for i := 0; in.Scan(); i++ {
		open.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL+"/v1/chat", bytes.NewReader([]byte(`{"message":"hello"}`)))
			if cfg.Direct {
				req, _ = http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL+"/v1/chat/completions", bytes.NewReader(cfg.Body))
				req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
			} else {
				req.Header.Set("X-Test-User", fmt.Sprintf("idle-%d", i%100))
				req.Header.Set("X-Test-Plan", "bench")
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil { // closed before the simulator's first token
					return
				}
				failed.Do(func() { fmt.Fprintln(os.Stderr, "stream", i, err) })
				return
			}
			<-ctx.Done()
			resp.Body.Close()
		})
	}
	cancel()
	open.Wait()
	return 0
}
