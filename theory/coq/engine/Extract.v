(* Extraction of the engine model to OCaml (model.ml); main.ml reads the
   operations and prints the observations (FORMAT.md), including each
   rendering's Anthropic request with its wire ids (Anthropic.v's
   anthropic_wire, the request whose validity render_anthropic proves). *)
From Coq Require Import Extraction ExtrOcamlBasic ExtrOcamlNatInt.
From VistaLabEngine Require Import Model Anthropic.
Extraction Language OCaml.
Extraction "model.ml" init step render mode_of tokens total overhead conversation
  unit_rows ledger store recover anthropic_wire.
