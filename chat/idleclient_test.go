package chat_test

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
	URL     string              // where every stream posts Body
	Body    []byte              // the request body
	Headers []map[string]string // stream i's headers are Headers[i % len(Headers)]
	H2      bool                // HTTP/2 without TLS (an http URL)
	CA      []byte              // the certificate (DER) to trust for an https URL
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
	if cfg.CA != nil {
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
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(cfg.Body))
			req.Header.Set("Content-Type", "application/json")
			if len(cfg.Headers) > 0 {
				for k, v := range cfg.Headers[i%len(cfg.Headers)] {
					req.Header.Set(k, v)
				}
			}
			resp, err := client.Do(req)
			if err != nil {
				if ctx.Err() != nil { // closed before the simulator's first token
					return
				}
				failed.Do(func() { fmt.Fprintln(os.Stderr, "stream", i, err) })
				return
			}
			if resp.StatusCode != http.StatusOK {
				failed.Do(func() { fmt.Fprintln(os.Stderr, "stream", i, resp.Status) })
			}
			<-ctx.Done()
			resp.Body.Close()
		})
	}
	cancel()
	open.Wait()
	return 0
}
