// Package content is the one representation of a record's content blocks —
// text, images and documents — shared by every provider path.
//
// A record's messages arrive in the Anthropic Messages shape:
//
//	{"role":"user","content":[
//	  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR..."}},
//	  {"type":"document","name":"invoice","source":{"type":"s3","uri":"s3://bucket/uploads/caller/inv.pdf"}},
//	  {"type":"text","text":"Extract the total."}]}
//
// Parse turns them into Messages; a Checker validates them against the model's
// input modalities and the documented limits of one provider path (see
// LimitsFor, each limit with its source), detecting every binary's format from
// its bytes; the Write* renderers stream each path's wire shape, base64-encoding
// s3:// parts from an Opener one block at a time; Estimate gives the input
// token estimate and a Summary fit for a dry run.
//
// The package reads nothing but its arguments: the caller passes the model's
// modalities (from the model catalog) and the caller's own upload prefix.
package content
