(* Extraction of the engine model to OCaml (model.ml); main.ml reads the
   operations and prints the observations (FORMAT.md), including each
   rendering's Anthropic request with its wire ids (Anthropic.v's
   anthropic_wire, the request whose validity render_anthropic proves). *)
From Coq Require Import Extraction ExtrOcamlBasic ExtrOcamlNatInt.
From Coq Require PeanoNat.
From VistaLabEngine Require Import Model Anthropic.
Extraction Language OCaml.
(* Speed only, not meaning: Coq's Nat.min and Nat.max recurse once per unit of
   the smaller argument (a token budget is thousands of steps), and rev appends
   once per element (quadratic); on the naturals ExtrOcamlNatInt maps to
   non-negative OCaml ints these are OCaml's own min, max and List.rev. *)
Extract Inlined Constant Coq.Arith.PeanoNat.Nat.min => "Stdlib.min".
Extract Inlined Constant Coq.Arith.PeanoNat.Nat.max => "Stdlib.max".
Extract Inlined Constant Coq.Lists.List.rev => "List.rev".
Extract Inlined Constant Datatypes.length => "List.length".
Extraction "model.ml" init step render mode_of tokens total overhead conversation
  unit_rows ledger store recover anthropic_wire.
