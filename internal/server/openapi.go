package server

import (
	_ "embed"
	"net/http"
)

// openapiDoc describes every route in routeTable; a test keeps the two in
// step.
//
//go:embed openapi.json
var openapiDoc []byte

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(openapiDoc)
	return err
}

// OpenAPI returns the OpenAPI 3.1 document.
func OpenAPI() []byte { return openapiDoc }
