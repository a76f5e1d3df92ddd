(* Extraction of the engine model to OCaml (model.ml); main.ml reads the
   operations and prints the observations (FORMAT.md). *)
From Coq Require Import Extraction ExtrOcamlBasic ExtrOcamlNatInt.
From VistaLabEngine Require Import Model.
Extraction Language OCaml.
Extraction "model.ml" init step render mode_of tokens total overhead conversation
  unit_rows store recover.
