package controlplane

// ICEServer is an ICE server as a phone's WebRTC stack takes it
// (RTCIceServer): a relayed session's start hands the phone the relay's
// TURN servers, since the phone needs them before it gathers candidates
// for the offer it posts, and the SDP answer cannot carry them.
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential string   `json:"credential,omitempty"`
}

// relayICEServers are the relay network's TURN servers for a phone.
func (s *Service) relayICEServers() []ICEServer {
	var out []ICEServer
	for _, is := range s.relayNet.ICEServers() {
		cred, _ := is.Credential.(string)
		out = append(out, ICEServer{URLs: is.URLs, Username: is.Username, Credential: cred})
	}
	return out
}
